package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// tmux drives `jobctl top` in a real terminal: a detached tmux session on a
// server of its own, keys sent with send-keys and the screen read with
// capture-pane.
type tmux struct {
	t       *testing.T
	socket  string
	session string
}

func newTmux(t *testing.T) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("this test needs tmux: install it (apt-get install tmux); .ci/run installs it when missing")
	}
	tm := &tmux{t: t, socket: "jobctl-e2e-" + randomSuffix(), session: "top"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmux) cmd(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends keys by tmux's names: "Tab", "Escape", "y".
func (tm *tmux) keys(keys ...string) {
	tm.t.Helper()
	tm.cmd(append([]string{"send-keys", "-t", tm.session}, keys...)...)
}

func (tm *tmux) screen() string {
	tm.t.Helper()
	return tm.cmd("capture-pane", "-p", "-t", tm.session)
}

// waitFor polls the screen until it shows every one of want.
func (tm *tmux) waitFor(want ...string) string {
	tm.t.Helper()
	return tm.waitUntil(strings.Join(want, ", "), func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

// waitUntil polls the screen until cond holds for it.
func (tm *tmux) waitUntil(what string, cond func(screen string) bool) string {
	tm.t.Helper()
	var s string
	if !waitfor.Within(30*time.Second, func() bool { s = tm.screen(); return cond(s) }) {
		tm.t.Fatalf("the screen never showed %s:\n%s", what, s)
	}
	return s
}

func TestTopInATerminal(t *testing.T) {
	tm := newTmux(t)
	c := sqliteCluster(t)
	c.serve("node-a")
	id := c.submit("--type", "sleep", "--payload", `{"duration":"10m"}`)
	c.waitStatus(id, "RUNNING", 30*time.Second)

	exitFile := filepath.Join(t.TempDir(), "exit")
	script := "JOBCTL_DB='" + c.dsn + "' '" + binary + "' top --interval 200ms; echo $? > '" + exitFile + "'"
	tm.cmd("new-session", "-d", "-s", tm.session, "-x", "100", "-y", "30", "sh", "-c", script)

	s := tm.waitFor("Nodes (1)", "node-a", "lease node-a", "RUNNING 1")
	if !strings.Contains(s, "db sqlite:") {
		t.Errorf("header does not name the database:\n%s", s)
	}

	// The jobs pane: select the job and explain it.
	tm.keys("Tab")
	tm.waitFor("▸ " + id)
	tm.keys("e")
	tm.waitFor("Explain job "+id, "esc to close")
	tm.keys("Escape")
	tm.waitFor("Nodes (1)")

	// Pause and resume need no confirmation.
	tm.keys("p")
	tm.waitFor("job " + id + " paused")
	c.waitStatus(id, "PAUSED", 10*time.Second)
	tm.keys("p")
	tm.waitFor("job " + id + " resumed")
	c.waitStatus(id, "RUNNING", 10*time.Second)

	// Cancel asks first, with a reason to give; esc leaves the job alone,
	// enter cancels it. The result clears from the status line.
	tm.keys("c")
	tm.waitFor("Cancel job " + id)
	tm.keys("Escape")
	tm.waitFor("left as it was")
	if st := c.show(id).Status; st != "RUNNING" {
		t.Fatalf("esc changed the job to %s", st)
	}
	tm.waitUntil("the status line cleared", func(s string) bool { return !strings.Contains(s, "left as it was") })
	tm.keys("c")
	tm.waitFor("enter: go ahead", "reason (optional):")
	tm.keys("-l", "ran into the backup window")
	tm.keys("Enter")
	tm.waitFor("job " + id + " cancelled")
	c.waitStatus(id, "CANCELLED", 30*time.Second)

	// Enter on the job opens its detail, which says who cancelled it and
	// why; the command line says the same.
	who := operatorName(t)
	tm.keys("Enter")
	tm.waitFor("Job "+id+" · sleep", "cancelled by "+who+": ran into the backup window", "Log · last lines")
	tm.keys("Escape")
	tm.waitFor("Nodes (1)")
	if out := c.ok("show", id); !strings.Contains(out, "cancelled by "+who+": ran into the backup window") {
		t.Errorf("show %s after the cancel from top:\n%s", id, out)
	}

	// Maintenance on the node, from the nodes pane.
	tm.keys("Tab")
	tm.keys("m")
	tm.waitFor("Put node node-a in maintenance")
	tm.keys("Enter")
	tm.waitFor("ONLINE,MAINTENANCE", "node node-a is in maintenance")
	c.eventually(10*time.Second, "node-a in maintenance", func() bool { return c.nodes()[0].Maintenance })

	// Help, then a smaller terminal.
	tm.keys("?")
	tm.waitFor("Keys", "esc or ? to close")
	tm.keys("Escape")
	tm.waitFor("Nodes (1)")
	tm.cmd("resize-window", "-t", tm.session, "-x", "80", "-y", "24")
	tm.waitUntil("the dashboard redrawn at 80x24", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return len(lines) == 24 && strings.Contains(lines[23], "? more • q quit") &&
			strings.Contains(s, "Nodes (1)") && strings.Contains(s, "SEEN")
	})

	tm.keys("q")
	c.eventually(20*time.Second, "top to exit", func() bool {
		b, err := os.ReadFile(exitFile)
		return err == nil && strings.TrimSpace(string(b)) != ""
	})
	if b, _ := os.ReadFile(exitFile); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("top exited %s", b)
	}
}

func TestTopRefusesAPipe(t *testing.T) {
	c := sqliteCluster(t)
	r := c.run("top")
	if r.code != 2 || !strings.Contains(r.stderr, "jobctl top needs a terminal; to follow jobs from a script use 'jobctl list -w'") || r.stdout != "" {
		t.Errorf("top on a pipe: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestTopShowsWhatJobsUse: the jobs pane shows the cores and memory a
// running job's node last reported for it, and top flags a type whose
// measured runs are far from the load they declared.
func TestTopShowsWhatJobsUse(t *testing.T) {
	tm := newTmux(t)
	c := sqliteCluster(t)
	c.serve("node-a", "--exec", "--max-load", "8")
	// Five runs of load 4 that use next to no CPU: the declared load is
	// far above the use.
	var idle []string
	for range 5 {
		idle = append(idle, c.submit("--load", "4", "--", "sleep", "0.2"))
	}
	for _, id := range idle {
		c.waitStatus(id, "FINISHED", 60*time.Second)
	}
	busy := c.submit("--type", "exec", "--load", "1", "--", "sh", "-c", "while :; do :; done")
	c.waitStatus(busy, "RUNNING", 30*time.Second)

	script := "JOBCTL_DB='" + c.dsn + "' '" + binary + "' top --interval 200ms"
	tm.cmd("new-session", "-d", "-s", tm.session, "-x", "140", "-y", "30", "sh", "-c", script)
	row := regexp.MustCompile(busy + ` +RUNNING +exec! +node-a +1 +(\d+(\.\d+)?) +(\d+(\.\d+)?[KMG]iB)`)
	s := tm.waitUntil("the busy job with the cores and memory it uses, its type flagged", func(s string) bool {
		m := row.FindStringSubmatch(s)
		return m != nil && m[1] != "0"
	})
	if !regexp.MustCompile(`! exec: load 4, uses 0(\.\d+)? cores p95`).MatchString(s) {
		t.Errorf("the header does not flag exec's load:\n%s", s)
	}
	c.ok("cancel", busy)
}

package main_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSleepProgressIsVisibleWhileItRuns(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo")
	id := c.submit("--type", "sleep", "--payload", `{"duration":"60s"}`)
	var j jobView
	c.eventually(30*time.Second, "the sleep job to report progress", func() bool {
		j = c.show(id)
		return j.Progress > 0
	})
	if j.Status != "RUNNING" {
		t.Errorf("job is %s with progress %d; want progress while RUNNING", j.Status, j.Progress)
	}
	c.ok("cancel", id)
}

func TestDrainDeadlineMovesWhatRunsToAnotherNode(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("a", "--exec", "--cancel-grace", "2s")
	pids := filepath.Join(t.TempDir(), "pids")
	id := c.submit("--", "sh", "-c", `echo $$ >> "$1"; exec sleep 1000`, "sh", pids)
	c.waitStatus(id, "RUNNING", 20*time.Second)
	first := c.pids(pids, 1)[0]
	c.serve("b", "--exec", "--cancel-grace", "2s")

	r := c.run("nodes", "drain", "a", "--deadline", "0", "--timeout", "60s", "-o", "json")
	if r.code != 0 {
		t.Fatalf("drain --deadline 0: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "deadline passed: stopping 1 job on node a to put back in the queue: "+id+"\n") ||
		!strings.Contains(r.stderr, "job "+id+" is back in the queue\n") ||
		!strings.HasSuffix(r.stderr, "node a is drained: no job is active on it\n") {
		t.Errorf("drain stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, `"name": "a"`) || !strings.Contains(r.stdout, `"state": "ONLINE"`) || !strings.Contains(r.stdout, `"maintenance": true`) {
		t.Errorf("drain -o json printed %s; want node a in maintenance", r.stdout)
	}
	// The job runs again on the other node, and only once its first run
	// has stopped.
	second := c.pids(pids, 2)[1]
	if processAlive(first) {
		t.Errorf("the first run (pid %d) still runs beside the second (pid %d)", first, second)
	}
	j := c.waitStatus(id, "RUNNING", 30*time.Second)
	if j.Node != "b" {
		t.Errorf("job runs on %q; want it moved to b", j.Node)
	}
	c.ok("cancel", id)
}

func TestRemoveANodeThatWasKilled(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("doomed")
	id := c.submit("--type", "sleep", "--payload", `{"duration":"1000s"}`)
	c.waitStatus(id, "RUNNING", 20*time.Second)
	n.stop(t, syscall.SIGKILL)

	// Just killed, it still looks alive: refused, nothing changed.
	r := c.run("nodes", "rm", "doomed")
	if r.code != 1 || !strings.Contains(r.stderr, "it looks alive") {
		t.Fatalf("rm right after the kill: exit %d, stderr %q; want a refusal", r.code, r.stderr)
	}
	if j := c.show(id); j.Status != "RUNNING" {
		t.Fatalf("after the refused rm the job is %s", j.Status)
	}
	// Once it has been silent for long enough, its job is recovered and it goes.
	c.eventually(40*time.Second, "nodes rm to remove the killed node", func() bool {
		r = c.run("nodes", "rm", "doomed")
		return r.code == 0
	})
	if r.stdout != "doomed\n" || r.stderr != "job "+id+" of node doomed is back in the queue\n" {
		t.Errorf("rm printed %q, %q", r.stdout, r.stderr)
	}
	if j := c.show(id); j.Status != "RESTART" || j.Node != "" {
		t.Errorf("job after rm: %s on %q; want RESTART off the node", j.Status, j.Node)
	}
	for _, nv := range c.nodes() {
		if nv.Name == "doomed" {
			t.Errorf("node doomed is still listed: %+v", nv)
		}
	}
}

// A node killed with SIGKILL shows LOST once its node lease has passed on
// the database's clock, saying its job goes back to the queue, long before
// heartbeats (here a minute apart) could mark it OFFLINE; the table and -o
// json say the same, and its last health report is no longer shown.
func TestAKilledNodeShowsLostOnceItsLeasePassed(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("keeper", "--exec", "--heartbeat-interval", "60s")
	c.ok("nodes", "maintenance", "keeper", "on") // the job must land on the victim
	victim := c.serve("victim", "--exec", "--heartbeat-interval", "60s", "--node-lease", "3s", "--dispatch-interval", "0")
	g := newGate(t)
	id := c.submit("--", "sh", "-c", g.script())
	if j := c.waitStatus(id, "RUNNING", 30*time.Second); j.Node != "victim" {
		t.Fatalf("the job runs on %q, want victim", j.Node)
	}
	victim.stop(t, syscall.SIGKILL)
	killed := time.Now()
	var v nodeView
	c.eventually(30*time.Second, "the killed node to show LOST", func() bool {
		for _, n := range c.nodes() {
			if n.Name == "victim" {
				v = n
			}
		}
		return v.State == "LOST"
	})
	if time.Since(killed) > 25*time.Second {
		t.Errorf("LOST %s after the kill; want it soon after its 3s node lease", time.Since(killed))
	}
	if !strings.HasPrefix(v.Note, "silent for ") || !strings.Contains(v.Note, "past its node lease 3s: it has stopped its runs") || v.Overloaded {
		t.Errorf("victim %+v; want a note that it is silent past its lease, and no stale health", v)
	}
	out := c.ok("nodes")
	if !regexp.MustCompile(`(?m)^victim\tLOST\t.*\tsilent for [0-9.]+s, past its node lease 3s: it has stopped its runs`).MatchString(out) {
		t.Errorf("nodes printed\n%s\nwant victim LOST with why", out)
	}
	c.ok("nodes", "maintenance", "keeper", "off")
	g.open(t)
	c.waitStatus(id, "FINISHED", 60*time.Second)
}

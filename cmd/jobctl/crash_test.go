package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A node killed with SIGKILL takes its job's processes with it; the
// heartbeat marks it OFFLINE, the dispatcher restarts the job on another
// node, and the job completes exactly once.
func TestJobOfAKilledNodeRunsAgainElsewhereExactlyOnce(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	c.serve("keeper", "--exec")
	c.ok("nodes", "maintenance", "keeper", "on") // the first run must land on the victim
	victim := c.serve("victim", "--exec", "--dispatch-interval", "0")

	base := filepath.Join(t.TempDir(), "run")
	// The job waits for the gate, which opens only after the kill: the
	// first run is still going when its node dies, however slow the machine.
	g := newGate(t)
	id := c.submit("--", "sh", "-c", `echo $$ > "$1.$JOBCTL_ATTEMPT.tmp"; mv "$1.$JOBCTL_ATTEMPT.tmp" "$1.$JOBCTL_ATTEMPT"; `+
		g.script()+`; echo "$JOBCTL_NODE" >> "$1.done"`, "sh", base)
	if j := c.waitStatus(id, "RUNNING", 20*time.Second); j.Node != "victim" {
		t.Fatalf("the job runs on %q, want victim", j.Node)
	}
	pid := c.pids(base+".1", 1)[0]

	victim.stop(t, syscall.SIGKILL)
	c.eventually(20*time.Second, "the job's process to die with its node", func() bool { return !processAlive(pid) })
	g.open(t)
	c.ok("nodes", "maintenance", "keeper", "off")

	c.ok("wait", id, "--timeout", "60s")
	j := c.show(id)
	if j.Status != "FINISHED" || j.Node != "keeper" || j.Attempt != 2 {
		t.Fatalf("job = %+v, want FINISHED on keeper at attempt 2", j)
	}
	done, _ := os.ReadFile(base + ".done")
	if got := strings.Fields(string(done)); len(got) != 1 || got[0] != "keeper" {
		t.Fatalf("the job completed %d times (%q), want once, on keeper", len(got), got)
	}
	for _, n := range c.nodes() {
		if n.Name == "victim" && n.State != "OFFLINE" {
			t.Errorf("the killed node is %s, want OFFLINE", n.State)
		}
	}
}

// A cleanly stopped node lets running jobs finish within its shutdown grace,
// then stops the rest and puts them back in the queue for another node.
func TestCleanShutdownPutsUnfinishedJobsBackInTheQueue(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("leaving", "--exec", "--shutdown-grace", "5s", "--cancel-grace", "1s")
	pidFile := filepath.Join(t.TempDir(), "pid")
	g := newGate(t)
	long := c.submit("--", "sh", "-c", `echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 60`, "sh", pidFile)
	short := c.submit("--", "sh", "-c", g.script())
	c.waitStatus(long, "RUNNING", 20*time.Second)
	c.waitStatus(short, "RUNNING", 20*time.Second)
	pid := c.pids(pidFile, 1)[0]
	// The short job ends while the node waits out its grace: open its gate
	// only once the node says it is waiting.
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.eventually(20*time.Second, "the node to wait for its jobs", func() bool {
		return strings.Contains(n.log.String(), "waiting for running jobs to finish")
	})
	g.open(t)
	n.stop(t, syscall.SIGTERM)
	if j := c.show(short); j.Status != "FINISHED" {
		t.Errorf("a job that ends within the shutdown grace is %s, want FINISHED", j.Status)
	}
	if j := c.show(long); j.Status != "RESTART" || j.Node != "" {
		t.Errorf("a job cut off by shutdown = %s on %q, want RESTART with no node", j.Status, j.Node)
	}
	if processAlive(pid) {
		t.Errorf("the cut-off job's process %d outlived its node", pid)
	}
}

package main_test

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// README's first run on a machine far busier than the node's load-average
// limit: `serve --exec` with the gate as it is by default, then `submit
// --wait -- echo hello`. The node says at start that its load average is
// above the limit, naming both and the flag, and the job runs all the same:
// a lone node is never held back by its load average.
func TestFirstRunOnABusyMachine(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serveGated("solo", 1000, "--exec")
	limit := fmt.Sprint(2 * runtime.NumCPU()) // the default: twice the cores
	said := "load average 1000 is above --max-load-avg " + limit +
		": this node gets new work only when no node under its limit can take it ('--max-load-avg off' removes the limit)"
	c.eventually(20*time.Second, "the node to say its load average is above its limit", func() bool {
		return strings.Contains(n.log.String(), said)
	})
	if got := strings.Count(n.log.String(), "is above --max-load-avg"); got != 1 {
		t.Errorf("the node said %d times that it is above its limit; want once, at start", got)
	}
	r := c.run("submit", "--wait", "--timeout", "60s", "--", "echo", "hello")
	if r.code != 0 {
		t.Fatalf("submit --wait on a lone node above its load-average limit: exit %d, stderr %q", r.code, r.stderr)
	}
	id := jobID(r.stdout)
	if logs := c.ok("logs", id); logs != "hello\n" {
		t.Errorf("logs %s: %q; want hello", id, logs)
	}
	nv := c.nodes()[0]
	if !nv.Overloaded || nv.OverloadReason != "load average 1000 above "+limit {
		t.Errorf("node %+v; want it shown overloaded by its load average", nv)
	}
}

// In a cluster the gate still keeps work off a node above its limit while a
// calmer node has room; once the calm node is full the busy one takes the
// rest, rather than the jobs waiting for the load average to fall.
func TestTheLoadAverageGateShiftsWorkToCalmerNodes(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serveGated("hot", 1000, "--exec", "--max-load", "2")
	c.serveGated("calm", 0.5, "--exec", "--max-load", "2")
	c.eventually(20*time.Second, "both nodes to report their load average", func() bool {
		var hot, calm bool
		for _, nv := range c.nodes() {
			hot = hot || (nv.Name == "hot" && nv.Overloaded)
			calm = calm || (nv.Name == "calm" && !nv.Overloaded && nv.State == "ONLINE")
		}
		return hot && calm
	})
	g := newGate(t)
	first := []string{c.submit("--load", "1", "--", "sh", "-c", g.script()), c.submit("--load", "1", "--", "sh", "-c", g.script())}
	for _, id := range first {
		if j := c.waitStatus(id, "RUNNING", 60*time.Second); j.Node != "calm" {
			t.Errorf("job %s runs on %s while the calm node had room; want calm", id, j.Node)
		}
	}
	third := c.submit("--load", "1", "--", "sh", "-c", g.script())
	if j := c.waitStatus(third, "RUNNING", 60*time.Second); j.Node != "hot" {
		t.Errorf("job %s runs on %s with the calm node full; want the hot node", third, j.Node)
	}
	g.open(t)
	for _, id := range append(first, third) {
		c.waitStatus(id, "FINISHED", 60*time.Second)
	}
}

// wait, piped, says on stderr why a job still waits once that has stood
// for ten seconds, in explain's words; its stdout stays the final rows.
func TestWaitSaysWhyAJobWaitsWhenPiped(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec")
	id := c.submit("--type", "nosuch")
	r := c.run("wait", id, "--timeout", "20s")
	if r.code != 5 {
		t.Fatalf("wait on a job no node runs: exit %d, want 5 (stderr %q)", r.code, r.stderr)
	}
	note := regexp.MustCompile(`(?m)^jobctl: job ` + id + ` still QUEUED after 1[0-9]s: no node can ever run this job: no node offers type "nosuch"$`)
	if !note.MatchString(r.stderr) || strings.Count(r.stderr, "still QUEUED") != 1 {
		t.Errorf("stderr %q; want one line saying why the job waits", r.stderr)
	}
	if !strings.HasPrefix(r.stdout, id+"\tQUEUED\t") {
		t.Errorf("stdout %q; want the job's row", r.stdout)
	}
}

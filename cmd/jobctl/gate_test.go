package main_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A node whose machine is short of memory takes no jobs, says why, and
// takes them again once the reserve is gone. A memory reserve far above
// any machine's memory makes the gate hold for certain, whatever else runs
// here; the load-average gate stays off so it cannot interfere.
func TestOverloadedNodeHoldsJobsBackAndSaysWhy(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	const pebibyte = 1 << 50
	n := c.serve("tight", "--reserved-memory", strconv.Itoa(pebibyte))

	// The node reports its free memory with its first touch after start.
	var v nodeView
	c.eventually(20*time.Second, "node tight to report itself overloaded", func() bool {
		for _, nv := range c.nodes() {
			if nv.Name == "tight" {
				v = nv
			}
		}
		return v.Overloaded
	})
	if !strings.HasPrefix(v.OverloadReason, "free memory ") || !strings.Contains(v.OverloadReason, " under reserve ") {
		t.Errorf("overload_reason %q; want free memory under the reserve", v.OverloadReason)
	}
	if v.ReservedMemory != pebibyte || v.MaxLoadAvg != 0 || (v.State != "ONLINE" && v.State != "WATCH") {
		t.Errorf("node %+v; want it alive, a 1 PiB reserve and the load-average gate off", v)
	}
	if out := c.ok("nodes"); !strings.Contains(out, "\toverloaded: free memory ") {
		t.Errorf("nodes printed %q; want the row to say the node is overloaded", out)
	}

	id := c.submit("--type", "noop")
	// A round in progress when the job was created may have read the queue
	// before it; the three after that saw the job and left it.
	c.waitRounds(n, 4)
	if j := c.show(id); j.Status != "QUEUED" || j.Node != "" {
		t.Fatalf("job %s after three rounds on an overloaded node: %s on %q; want QUEUED", id, j.Status, j.Node)
	}

	n.stop(t, syscall.SIGTERM)
	c.serve("tight")
	c.waitStatus(id, "FINISHED", 60*time.Second)
	for _, nv := range c.nodes() {
		if nv.Overloaded {
			t.Errorf("node %s still overloaded without a reserve: %s", nv.Name, nv.OverloadReason)
		}
	}
}

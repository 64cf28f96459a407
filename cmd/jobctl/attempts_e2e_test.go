package main_test

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// attemptView is one element of the "attempts" array of `show -o json`.
type attemptView struct {
	Attempt   int        `json:"attempt"`
	Node      string     `json:"node"`
	StartedAt *time.Time `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	ExitCode  *int       `json:"exit_code"`
	Ending    string     `json:"ending"`
	Message   string     `json:"message"`
}

func (c *cluster) attempts(id string) []attemptView {
	c.t.Helper()
	var j struct {
		Attempts []attemptView `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &j); err != nil {
		c.t.Fatalf("show %s: %v", id, err)
	}
	return j.Attempts
}

// An attempt cut short by a node killed with SIGKILL stays in `show`: its
// node, and RESTART with the lease holder's reason for giving the node up,
// followed by the attempt that finished on another node.
func TestShowListsTheAttemptOfAKilledNode(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	c.serve("holder", "--exec")
	c.ok("nodes", "maintenance", "holder", "on") // the first run must land on the worker
	worker := c.serve("worker", "--exec", "--dispatch-interval", "0", "--node-lease", "2s")

	g := newGate(t)
	id := c.submit("--", "sh", "-c", g.script())
	if j := c.waitStatus(id, "RUNNING", 20*time.Second); j.Node != "worker" {
		t.Fatalf("the job runs on %q, want worker", j.Node)
	}
	if as := c.attempts(id); len(as) != 1 || as[0].Node != "worker" || as[0].EndedAt != nil || as[0].StartedAt == nil {
		t.Fatalf("attempts while the first runs: %+v, want one on worker with a start and no end", as)
	}

	worker.stop(t, syscall.SIGKILL)
	c.ok("nodes", "maintenance", "holder", "off")
	c.eventually(60*time.Second, "the job to run again", func() bool {
		j := c.show(id)
		return j.Attempt == 2 && j.Status == "RUNNING"
	})
	g.open(t)
	c.ok("wait", id, "--timeout", "60s")

	as := c.attempts(id)
	if len(as) != 2 {
		t.Fatalf("attempts = %+v, want the lost one and the finished one", as)
	}
	lost, done := as[0], as[1]
	if lost.Attempt != 1 || lost.Node != "worker" || lost.Ending != "RESTART" || lost.ExitCode != nil ||
		!strings.Contains(lost.Message, "node worker") || lost.StartedAt == nil || lost.EndedAt == nil ||
		lost.EndedAt.Before(*lost.StartedAt) {
		t.Errorf("the attempt of the killed node = %+v, want attempt 1 on worker, RESTART, no exit code, "+
			"a message naming the node, a start and a later end", lost)
	}
	if done.Attempt != 2 || done.Node != "holder" || done.Ending != "FINISHED" || done.ExitCode == nil ||
		*done.ExitCode != 0 || done.StartedAt == nil || done.EndedAt == nil || done.StartedAt.Before(*lost.EndedAt) {
		t.Errorf("the finishing attempt = %+v, want attempt 2 on holder, FINISHED with exit code 0, after the first", done)
	}
	if r := c.ok("show", id); !strings.Contains(r, "worker") || !strings.Contains(r, "RESTART") {
		t.Errorf("show does not list the lost attempt:\n%s", r)
	}
}

package main_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// prunedView is what `prune -o json` prints.
type prunedView struct {
	Removed   int    `json:"removed"`
	OlderThan string `json:"older_than"`
	DryRun    bool   `json:"dry_run"`
}

func (c *cluster) prune(args ...string) prunedView {
	c.t.Helper()
	var p prunedView
	out := c.ok(append([]string{"prune", "-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		c.t.Fatalf("prune %v: %v in %q", args, err, out)
	}
	return p
}

// Jobs that ended go with their logs; one still running stays, and so does
// its parent, until it has ended too.
func TestPruneEndedJobsOnPostgres(t *testing.T) {
	c := postgresCluster(t)
	c.serve("solo", "--exec")
	g := newGate(t)
	parent := c.submit("--", "sh", "-c", g.script())
	c.waitStatus(parent, "RUNNING", 30*time.Second)
	child := c.submit("--parent", parent, "--", "sh", "-c", "echo child output")
	printed := c.submit("--", "sh", "-c", "echo some output")
	failed := c.submit("--", "false")
	running := c.submit("--", "sh", "-c", g.script())
	c.waitStatus(child, "FINISHED", 30*time.Second)
	c.waitStatus(printed, "FINISHED", 30*time.Second)
	c.waitStatus(failed, "FAILED", 30*time.Second)
	c.waitStatus(running, "RUNNING", 30*time.Second)
	if out := c.ok("logs", printed); !strings.Contains(out, "some output") {
		t.Fatalf("log of job %s: %q", printed, out)
	}

	if p := c.prune("--older-than", "1h"); p.Removed != 0 || p.OlderThan != "1h0m0s" {
		t.Errorf("prune --older-than 1h: %+v; want nothing removed, the jobs ended just now", p)
	}
	// The jobs are a millisecond old as soon as the database clock says so.
	c.eventually(30*time.Second, "the ended jobs to be older than 1ms", func() bool {
		p := c.prune("--older-than", "1ms", "--dry-run")
		return p.DryRun && p.Removed == 3
	})
	if p := c.prune("--older-than", "1ms"); p.Removed != 3 || p.DryRun {
		t.Errorf("prune --older-than 1ms: %+v; want the 3 ended jobs removed", p)
	}
	for _, id := range []string{child, printed, failed} {
		if r := c.run("show", id); r.code != 3 {
			t.Errorf("show %s after the prune: exit %d, want 3 (not found)\n%s%s", id, r.code, r.stdout, r.stderr)
		}
		if r := c.run("logs", id); r.code != 3 {
			t.Errorf("logs %s after the prune: exit %d, want 3 (not found)\n%s%s", id, r.code, r.stdout, r.stderr)
		}
	}
	for _, id := range []string{parent, running} {
		if j := c.show(id); j.Status != "RUNNING" {
			t.Errorf("job %s is %s after the prune, want it still RUNNING", id, j.Status)
		}
	}
	if r := c.run("prune", "--older-than", "1ms", "--state", "running"); r.code != 2 {
		t.Errorf("prune --state running: exit %d, want 2\n%s", r.code, r.stderr)
	}

	g.open(t)
	c.waitStatus(parent, "FINISHED", 30*time.Second)
	c.waitStatus(running, "FINISHED", 30*time.Second)
	c.eventually(30*time.Second, "the last jobs to be pruned", func() bool {
		c.prune("--older-than", "1ms")
		return strings.TrimSpace(c.ok("list", "--state", "all", "-q")) == ""
	})
}

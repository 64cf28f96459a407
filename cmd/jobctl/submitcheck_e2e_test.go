package main_test

import (
	"strings"
	"testing"
)

// On a cluster whose largest node has max load 2, a job of load 50 is
// warned about (it would keep a node to itself); --strict refuses it with
// exit 2 and writes nothing, as it refuses a type no node offers.
func TestSubmitWarnsOfAJobLargerThanEveryNode(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("small", "--exec", "--max-load", "2")
	r := c.run("submit", "--load", "50", "--hold", "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, "jobctl: warning: its load 50 is above every node's max load (the largest is 2)") {
		t.Fatalf("submit --load 50: exit %d, stderr %q; want the job created with a warning", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"submit", "--strict", "--load", "50", "--", "true"},
		{"submit", "--strict", "--type", "nosuch"},
	} {
		r := c.run(args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "(refused by --strict)") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("jobctl %s: exit %d, stdout %q, stderr %q; want exit 2 and one line", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if ids := strings.Fields(c.ok("list", "-q")); len(ids) != 1 {
		t.Errorf("jobs %v; want only the one submitted without --strict", ids)
	}
	if r := c.run("submit", "--strict", "--wait", "--timeout", "60s", "--", "echo", "fits"); r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Errorf("submit --strict of a job that fits: exit %d, stderr %q", r.code, r.stderr)
	}
}

package main_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parentScript submits two children of load 1 that run until the gate in
// $2 opens, waits for them, and exits 0 only if they all ended well.
const parentScript = `set -e
"$1" submit --child --load 1 -- sh -c "$2"
"$1" submit --child --load 1 -- sh -c "$2"
"$1" wait --children
echo "children done"`

// familyView is what the tests read of a job and its children in 'show -o json'.
type familyView struct {
	Status   string `json:"status"`
	Children []struct {
		ID     int64  `json:"id"`
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"children"`
}

func (c *cluster) family(id string) familyView {
	c.t.Helper()
	var f familyView
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &f); err != nil {
		c.t.Fatalf("show %s: %v", id, err)
	}
	return f
}

// countStatus counts the children in a status.
func (f familyView) countStatus(status string) int {
	n := 0
	for _, ch := range f.Children {
		if ch.Status == status {
			n++
		}
	}
	return n
}

func TestAParentFillingTheOnlyNodeStillGetsItsChildrenRun(t *testing.T) {
	t.Parallel()
	// PostgreSQL tells the node of its children's ends by notification;
	// SQLite's node learns of them by polling.
	for name, open := range map[string]func(*testing.T) *cluster{"sqlite": sqliteCluster, "postgres": postgresCluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			parentFillingTheOnlyNode(t, open(t))
		})
	}
}

func parentFillingTheOnlyNode(t *testing.T, c *cluster) {
	c.serve("n1", "--exec", "--max-load", "1")
	g := newGate(t)
	parent := c.submit("--load", "1", "--", "sh", "-c", parentScript, "sh", binary, g.script())

	// While it waits it holds no load: one child runs on the node the
	// parent filled, the other waits for room.
	c.waitStatus(parent, "WAITING", 60*time.Second)
	c.eventually(60*time.Second, "a child to run beside its waiting parent", func() bool {
		f := c.family(parent)
		return f.Status == "WAITING" && len(f.Children) == 2 && f.countStatus("RUNNING") == 1
	})
	if out := c.ok("show", parent); !strings.Contains(out, "status\tWAITING\n") || !strings.Contains(out, "children\t2 (0 ended)\n") {
		t.Errorf("show of the waiting parent:\n%s", out)
	}
	if out := c.ok("explain", parent); !strings.Contains(out, "waiting for its children: 0 of 2 ended") {
		t.Errorf("explain of the waiting parent:\n%s", out)
	}
	if ns := c.nodes(); len(ns) != 1 || ns[0].Load != 1 || ns[0].Running != 1 {
		t.Errorf("nodes: %+v; want load 1 and one job running: the child, not the parent", ns)
	}

	g.open(t)
	if j := c.waitStatus(parent, "FINISHED", 60*time.Second); j.ExitCode == nil || *j.ExitCode != 0 {
		t.Errorf("parent ended %+v", j)
	}
	f := c.family(parent)
	if len(f.Children) != 2 || f.countStatus("FINISHED") != 2 {
		t.Errorf("children %+v, want both FINISHED", f.Children)
	}
	if log := c.ok("logs", parent); !strings.Contains(log, "children done") {
		t.Errorf("the parent's log:\n%s", log)
	}
	tree := c.ok("list", "--tree")
	lines := strings.Split(strings.TrimSuffix(tree, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], parent+"\t") ||
		!strings.HasPrefix(lines[1], "  "+strconv.FormatInt(f.Children[0].ID, 10)+"\t") ||
		!strings.HasPrefix(lines[2], "  "+strconv.FormatInt(f.Children[1].ID, 10)+"\t") {
		t.Errorf("list --tree:\n%s", tree)
	}
}

func TestCancellingAWaitingParentCancelsItAndItsChildren(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("n1", "--exec", "--max-load", "1")
	g := newGate(t) // never opened: only the cancel ends them
	parent := c.submit("--load", "1", "--", "sh", "-c", parentScript, "sh", binary, g.script())
	c.eventually(60*time.Second, "a child to run beside its waiting parent", func() bool {
		f := c.family(parent)
		return f.Status == "WAITING" && f.countStatus("RUNNING") == 1
	})
	c.ok("cancel", parent)
	c.waitStatus(parent, "CANCELLED", 60*time.Second)
	c.eventually(60*time.Second, "both children to be cancelled", func() bool {
		return c.family(parent).countStatus("CANCELLED") == 2
	})
	if ns := c.nodes(); len(ns) != 1 || ns[0].Load != 0 || ns[0].Running != 0 {
		t.Errorf("nodes: %+v; want nothing left running", ns)
	}
}

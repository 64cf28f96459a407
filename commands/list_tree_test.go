package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// treeFixture is two families and a lone job, inserted interleaved:
//
//	a ─┬─ a1 ─── a11
//	   └─ a2
//	b (RUNNING) ─── b1 (FAILED)
//	c
type treeFixture struct{ a, a1, a11, a2, b, b1, c *engine.Job }

func newTreeFixture(t *testing.T, e *testEnv) treeFixture {
	t.Helper()
	var f treeFixture
	f.a = e.insert(t, engine.JobInsertParams{})
	f.b = e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	f.a1 = e.insert(t, engine.JobInsertParams{ParentID: &f.a.ID})
	f.b1 = e.move(t, e.insert(t, engine.JobInsertParams{ParentID: &f.b.ID}),
		engine.StatusRunning, engine.StatusFailed)
	f.c = e.insert(t, engine.JobInsertParams{})
	f.a11 = e.insert(t, engine.JobInsertParams{ParentID: &f.a1.ID})
	f.a2 = e.insert(t, engine.JobInsertParams{ParentID: &f.a.ID})
	return f
}

// firstColumn is the first tab-separated cell of each line.
func firstColumn(out string) []string {
	var ids []string
	for line := range strings.Lines(out) {
		id, _, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		ids = append(ids, id)
	}
	return ids
}

func TestListTree(t *testing.T) {
	e := newTestEnv(t)
	f := newTreeFixture(t, e)
	id := func(j *engine.Job, depth int) string { return strings.Repeat("  ", depth) + fmt.Sprint(j.ID) }

	// Piped: the ID column indented two spaces a generation.
	if err := e.run(t, "list", "--tree"); err != nil {
		t.Fatal(err)
	}
	want := []string{id(f.a, 0), id(f.a1, 1), id(f.a11, 2), id(f.a2, 1), id(f.b, 0), id(f.b1, 1), id(f.c, 0)}
	if got := firstColumn(e.stdout.String()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("list --tree ids %q, want %q\n%s", got, want, e.stdout.String())
	}

	// A matching child whose parent is filtered out is a root.
	if err := e.run(t, "list", "--tree", "--state", "failed,queued", "--sort", "-id"); err != nil {
		t.Fatal(err)
	}
	want = []string{id(f.c, 0), id(f.b1, 0), id(f.a, 0), id(f.a2, 1), id(f.a1, 1), id(f.a11, 2)}
	if got := firstColumn(e.stdout.String()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("list --tree --state failed,queued --sort -id ids %q, want %q", got, want)
	}

	// On a terminal the families are drawn.
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "list", "--tree", "--type", "noop"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n")
	drawn := []string{
		fmt.Sprint(f.a.ID),
		"├─ " + fmt.Sprint(f.a1.ID),
		"│  └─ " + fmt.Sprint(f.a11.ID),
		"└─ " + fmt.Sprint(f.a2.ID),
		fmt.Sprint(f.b.ID),
		"└─ " + fmt.Sprint(f.b1.ID),
		fmt.Sprint(f.c.ID),
	}
	if !strings.HasPrefix(lines[0], "ID ") || len(lines) != len(drawn)+1 {
		t.Fatalf("terminal list --tree:\n%s", e.stdout.String())
	}
	for i, d := range drawn {
		if !strings.HasPrefix(lines[i+1], d+" ") {
			t.Errorf("line %d is %q, want it to begin %q", i+1, lines[i+1], d)
		}
	}
	e.f.IO.OutIsTerminal = false

	// JSON and -q: the same jobs, flat, in the tree's order.
	if err := e.run(t, "list", "--tree", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		ID       int64  `json:"id"`
		ParentID *int64 `json:"parent_id"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &listed); err != nil {
		t.Fatalf("list --tree -o json: %v\n%s", err, e.stdout.String())
	}
	var order []int64
	for _, j := range listed {
		order = append(order, j.ID)
	}
	wantOrder := []int64{f.a.ID, f.a1.ID, f.a11.ID, f.a2.ID, f.b.ID, f.b1.ID, f.c.ID}
	if fmt.Sprint(order) != fmt.Sprint(wantOrder) || listed[1].ParentID == nil || *listed[1].ParentID != f.a.ID {
		t.Errorf("list --tree -o json: %s", e.stdout.String())
	}
	if err := e.run(t, "list", "--tree", "-q"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(e.stdout.String()); fmt.Sprint(got) != fmt.Sprint(wantOrder) {
		t.Errorf("list --tree -q: %q, want %v", e.stdout.String(), wantOrder)
	}

	var usage *UsageError
	if err := e.run(t, "list", "--tree", "-w"); !errors.As(err, &usage) {
		t.Errorf("list --tree -w: %v, want a usage error", err)
	}
}

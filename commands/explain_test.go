package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// node registers an ONLINE node offering sleep, changed by edit.
func (e *testEnv) node(t *testing.T, name string, maxLoad float64, edit func(*engine.Node)) {
	t.Helper()
	n := engine.Node{Name: name, URL: "http://" + name, MaxLoad: maxLoad, MaxJobs: 200, Weight: 100,
		AcceptExceeding: true, Services: []engine.NodeService{{Type: engine.TypeSleep}}}
	if edit != nil {
		edit(&n)
	}
	if _, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: n}); err != nil {
		t.Fatal(err)
	}
}

func TestExplainParsesItsFlags(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	var got *ExplainOptions
	cmd := NewCmdExplain(f, func(_ context.Context, o *ExplainOptions) error { got = o; return nil })
	if err := execParse(cmd, "42", "--selector", "roundrobin", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if got.ID != 42 || got.Selector != "roundrobin" || got.Output.Format != formatJSON {
		t.Errorf("options %+v", got)
	}
	cmd = NewCmdExplain(f, func(_ context.Context, o *ExplainOptions) error { got = o; return nil })
	if err := execParse(cmd, "7"); err != nil || got.Selector != "loadfactor" || got.Output.Format != formatTable {
		t.Errorf("defaults: %v, %+v", err, got)
	}
	for _, args := range [][]string{{}, {"x"}, {"0"}, {"1", "2"}, {"1", "--selector", "nosuch"}, {"1", "-o", "yaml"}} {
		cmd := NewCmdExplain(f, func(context.Context, *ExplainOptions) error { return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("explain %v: %v; want a UsageError", args, err)
		}
	}
}

func TestExplainPipedNeverRunnable(t *testing.T) {
	e := newTestEnv(t)
	e.node(t, "big", 8, func(n *engine.Node) { n.AcceptExceeding = false })
	e.node(t, "small", 4, nil)
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Load: 10})
	if err := e.run(t, "explain", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`job	%d
type	sleep
load	10
priority	50
status	QUEUED
dispatchable	yes
selector	loadfactor
node	big	ONLINE		0/8	0/200	declines jobs above its max load 8 (accept-exceeding is off)
node	small	ONLINE		0/4	0/200	max load 4 below job load 10; only the largest nodes (max load 8) take it
conclusion	no node can ever run this job: its load 10 is above every node's max load (the largest is 8) and the largest nodes decline loads above their max
hint	start the largest nodes with --accept-exceeding, or submit the job with a smaller --load
`, j.ID)
	if got := e.stdout.String(); got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
}

func TestExplainPipedNeverRunnableCases(t *testing.T) {
	for _, tt := range []struct {
		name  string
		nodes bool
		typ   string
		want  string
	}{
		{"no node", false, engine.TypeSleep, "conclusion\tno node can ever run this job: no node is registered\nhint\tstart one with 'jobctl serve'\n"},
		{"type", true, "encode", "conclusion\tno node can ever run this job: no node offers type \"encode\"\nhint\tstart a node with 'jobctl serve --service encode=COMMAND'\n"},
		{"exec", true, engine.TypeExec, "conclusion\tno node can ever run this job: it is an exec job and no node runs exec jobs\nhint\tstart a node with 'jobctl serve --exec'\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			node := ""
			if tt.nodes {
				e.node(t, "a", 4, nil)
				node = "node\ta\tONLINE\t\t0/4\t0/200\tdoes not offer type \"" + tt.typ + "\"\n"
			}
			p := engine.JobInsertParams{Type: tt.typ}
			if tt.typ == engine.TypeExec {
				p.Args = []string{"true"}
			}
			j := e.insert(t, p)
			if err := e.run(t, "explain", fmt.Sprint(j.ID)); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("job\t%d\ntype\t%s\nload\t1\npriority\t50\nstatus\tQUEUED\ndispatchable\tyes\nselector\tloadfactor\n%s%s", j.ID, tt.typ, node, tt.want)
			if got := e.stdout.String(); got != want {
				t.Errorf("explain:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestExplainPipedHeldDelayedAndKeyBlocked(t *testing.T) {
	e := newTestEnv(t)
	e.node(t, "a", 4, nil)
	now, err := e.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	runAfter := now.Add(2 * time.Hour)
	held := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Status: engine.StatusInstantiated})
	delayed := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, RunAfter: &runAfter})
	head := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Key: "k"})
	blocked := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Key: "k"})
	nodeLine := "node\ta\tONLINE\t1\t0/4\t0/200\thas room: load 0 + 1 within max 4\n"
	for _, tt := range []struct {
		job    *engine.Job
		status string
		hold   string
	}{
		{held, "INSTANTIATED", "held: created with --hold; 'jobctl release' lets it run"},
		{delayed, "QUEUED", "starts in IN (run after " + runAfter.UTC().Format(time.RFC3339) + ")"},
		{blocked, "QUEUED", fmt.Sprintf("waiting behind job %d of key \"k\" (QUEUED)", head.ID)},
	} {
		if err := e.run(t, "explain", fmt.Sprint(tt.job.ID)); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("job\t%d\ntype\tsleep\nload\t1\npriority\t50\nstatus\t%s\ndispatchable\tno: %s\nselector\tloadfactor\n%s"+
			"conclusion\tnot dispatched: %s; were it dispatchable, node a would be offered it first\n",
			tt.job.ID, tt.status, tt.hold, nodeLine, tt.hold)
		// How long until it starts depends on the database's clock, which
		// runs on: the rest of the line does not.
		got := startsIn.ReplaceAllString(e.stdout.String(), "starts in IN (")
		if got != want {
			t.Errorf("explain %d:\n%s\nwant:\n%s", tt.job.ID, got, want)
		}
	}
}

var startsIn = regexp.MustCompile(`starts in [0-9hms.]+ \(`)

func TestExplainJSONAndUnknownJob(t *testing.T) {
	e := newTestEnv(t)
	e.node(t, "a", 4, nil)
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	if err := e.run(t, "explain", fmt.Sprint(j.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, e.stdout.String())
	}
	for _, field := range []string{"job", "now", "hold", "dispatchable", "hold_reason", "first_child", "oversized",
		"largest_max_load", "selector", "nodes", "never_runnable", "conclusion"} {
		if _, ok := got[field]; !ok {
			t.Errorf("explain -o json lacks %q", field)
		}
	}
	nodes, _ := got["nodes"].([]any)
	if len(nodes) != 1 {
		t.Fatalf("nodes = %v", got["nodes"])
	}
	n := nodes[0].(map[string]any)
	if n["node"] != "a" || n["rank"] != float64(1) || n["eligible"] != true || n["reason"] != "has room: load 0 + 1 within max 4" {
		t.Errorf("node = %v", n)
	}
	if err := e.run(t, "explain", "987654"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("explain of an unknown job: %v; want not found", err)
	}
}

// TestExplainSaysWhenATypesLoadIsFarOff: explain ends with a line naming a
// type whose declared load its measured runs belie, and -o json has the
// figures as load_check.
func TestExplainSaysWhenATypesLoadIsFarOff(t *testing.T) {
	e := usageFixture(t)
	queued := e.insert(t, engine.JobInsertParams{Type: "encode"})
	if err := e.run(t, "explain", fmt.Sprint(queued.ID)); err != nil {
		t.Fatal(err)
	}
	if want := "load\tencode: declared load 1, uses 3 cores p95 over 6 runs\n"; !strings.Contains(e.stdout.String(), want) {
		t.Errorf("piped explain:\n%s\nwant the line %q", e.stdout.String(), want)
	}
	e.stdout.Reset()
	if err := e.run(t, "explain", fmt.Sprint(queued.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		LoadCheck *engine.TypeUsage `json:"load_check"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if c := got.LoadCheck; c == nil || c.Runs != 6 || c.Verdict != engine.LoadUsesMore || c.CoresP95 != 3 {
		t.Errorf("load_check = %+v", got.LoadCheck)
	}

	// A type whose runs match their load is not flagged.
	e.stdout.Reset()
	sleeper := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	if err := e.run(t, "explain", fmt.Sprint(sleeper.ID)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.stdout.String(), "declared load") {
		t.Errorf("explain of a type never measured flags its load:\n%s", e.stdout.String())
	}
}

package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func (e *testEnv) registerNode(t *testing.T, name string) *engine.Node {
	t.Helper()
	n, err := e.store.NodeRegister(context.Background(), engine.NodeRegisterParams{Node: engine.Node{
		Name: name, URL: "http://" + name + ":7420", MaxLoad: 4, MaxJobs: 200, Weight: 100, Candidate: true,
		Services: []engine.NodeService{{Type: engine.TypeNoop}, {Type: engine.TypeSleep}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNodesList(t *testing.T) {
	e := newTestEnv(t)
	n1 := e.registerNode(t, "n1")
	e.registerNode(t, "n2")
	e.move(t, e.insert(t, engine.JobInsertParams{Load: 1.5}), engine.StatusDispatching, engine.StatusRunning)
	if ok, err := e.store.LeaseAcquire(context.Background(), "n1", time.Minute); err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}

	for _, args := range [][]string{{"nodes"}, {"nodes", "list"}} {
		if err := e.run(t, args...); err != nil {
			t.Fatal(err)
		}
		got := e.stdout.String()
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 2 {
			t.Fatalf("%v printed %q; want one row per node, no header", args, got)
		}
		want := fmt.Sprintf("n1\tONLINE\t1.5/4\t1\t100\tyes\t%s\t", rfc3339(&n1.LastSeen))
		if lines[0] != want || !strings.HasPrefix(lines[1], "n2\tONLINE\t0/4\t0\t100\t\t") {
			t.Errorf("%v printed\n%s\nwant first row %q", args, got, want)
		}
	}

	if err := e.run(t, "nodes", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var nodes []map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &nodes); err != nil || len(nodes) != 2 {
		t.Fatalf("nodes -o json: %v\n%s", err, e.stdout.String())
	}
	for _, f := range []string{"name", "url", "state", "max_load", "max_jobs", "load", "running", "weight", "dispatcher",
		"last_seen", "services", "load_avg", "max_load_avg", "mem_available", "reserved_memory", "cores",
		"overloaded", "overload_reason"} {
		if _, ok := nodes[0][f]; !ok {
			t.Errorf("nodes -o json lacks %q", f)
		}
	}
	if nodes[0]["dispatcher"] != true || nodes[0]["load"] != 1.5 || nodes[0]["overloaded"] != false || nodes[0]["overload_reason"] != "" {
		t.Errorf("node n1 = %v; want the dispatcher with load 1.5, not overloaded", nodes[0])
	}

	if err := e.run(t, "nodes", "list", "-q"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != "n1\nn2\n" {
		t.Errorf("nodes -q = %q; want the names", got)
	}
}

func TestNodesUnknownSubcommand(t *testing.T) {
	e := newTestEnv(t)
	err := e.run(t, "nodes", "lst")
	if !errors.As(err, new(*UsageError)) || !strings.Contains(err.Error(), `did you mean "list"?`) {
		t.Errorf("nodes lst: %v; want a UsageError suggesting list", err)
	}
}

func TestNodesMaintenance(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	ctx := context.Background()
	state := func() engine.NodeState {
		n, err := e.store.NodeGet(ctx, "n1")
		if err != nil {
			t.Fatal(err)
		}
		return n.State
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeMaintenance || e.stdout.String() != "n1\tMAINTENANCE\n" {
		t.Errorf("after on: %s, printed %q", state(), e.stdout.String())
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeOnline || e.stdout.String() != "n1\tONLINE\n" {
		t.Errorf("after off: %s, printed %q", state(), e.stdout.String())
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err == nil || !strings.Contains(err.Error(), "not in maintenance") {
		t.Errorf("off when ONLINE: %v; want an error saying it is not in maintenance", err)
	}
	// Only the flag changes: a node the heartbeat marked OFFLINE keeps
	// maintenance, and turning it off does not claim the node is ONLINE.
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil || !strings.Contains(e.stderr.String(), "in maintenance already") {
		t.Errorf("on twice: %v, stderr %q; want a note that it is in maintenance already", err, e.stderr.String())
	}
	if err := e.store.NodeSetState(ctx, "n1", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	if err := e.store.NodeSetState(ctx, "n1", engine.NodeOnline); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeMaintenance {
		t.Errorf("after OFFLINE and back ONLINE: %s; want maintenance kept", state())
	}
	if err := e.store.NodeSetState(ctx, "n1", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeOffline || e.stdout.String() != "n1\tOFFLINE\n" ||
		!strings.Contains(e.stderr.String(), "takes jobs again when it is back ONLINE") {
		t.Errorf("off when OFFLINE: %s, printed %q, %q; want it OFFLINE still", state(), e.stdout.String(), e.stderr.String())
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err == nil || !strings.Contains(err.Error(), "n1 is OFFLINE, not in maintenance") {
		t.Errorf("off twice: %v; want an error saying it is not in maintenance", err)
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeOffline || e.stdout.String() != "n1\tOFFLINE\n" ||
		!strings.Contains(e.stderr.String(), "stays out of dispatch when it is back ONLINE") {
		t.Errorf("on when OFFLINE: %s, printed %q, %q", state(), e.stdout.String(), e.stderr.String())
	}
	if err := e.store.NodeSetState(ctx, "n1", engine.NodeOnline); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeMaintenance {
		t.Errorf("maintenance set while OFFLINE, then back ONLINE: %s; want MAINTENANCE", state())
	}

	if err := e.run(t, "nodes", "maintenance", "n1", "maybe"); !errors.As(err, new(*UsageError)) {
		t.Errorf("maybe: %v; want a UsageError", err)
	}
	if err := e.run(t, "nodes", "maintenance", "n1"); !errors.As(err, new(*UsageError)) {
		t.Errorf("missing on|off: %v; want a UsageError", err)
	}
	if err := e.run(t, "nodes", "maintenance", "ghost", "on"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown node: %v; want not found", err)
	}
}

func TestNodesMaintenanceTerminal(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	e.registerNode(t, "n1")
	for _, c := range []struct{ args, want string }{
		{"on", "node n1: ONLINE → MAINTENANCE\n"},
		{"off", "node n1: MAINTENANCE → ONLINE\n"},
	} {
		if err := e.run(t, "nodes", "maintenance", "n1", c.args); err != nil {
			t.Fatal(err)
		}
		if got := e.stdout.String(); got != c.want {
			t.Errorf("%s printed %q; want %q", c.args, got, c.want)
		}
	}
	if err := e.store.NodeSetState(context.Background(), "n1", engine.NodeError); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), "node n1: ERROR, maintenance on\n"; got != want {
		t.Errorf("on when ERROR printed %q; want %q", got, want)
	}
}

func TestNodesDrain(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	running := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning)
	e.insert(t, engine.JobInsertParams{}) // queued: not on the node

	if err := e.run(t, "nodes", "drain", "n1", "-q"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), fmt.Sprintf("%d\n", running.ID); got != want {
		t.Errorf("drain printed %q; want only the active job's id", got)
	}
	if !strings.Contains(e.stderr.String(), "n1\tMAINTENANCE\n") {
		t.Errorf("stderr %q; want the node's new state", e.stderr.String())
	}
	if !strings.Contains(e.stderr.String(), "1 job still active on node n1") {
		t.Errorf("stderr %q; want the count of active jobs", e.stderr.String())
	}
	if n, err := e.store.NodeGet(context.Background(), "n1"); err != nil || !n.Maintenance || n.State != engine.NodeMaintenance {
		t.Fatalf("after drain: %+v, %v; want n1 in maintenance", n, err)
	}

	err := e.run(t, "nodes", "drain", "n1", "--wait", "--timeout", "200ms")
	var timeout *WaitTimeoutError
	if !errors.As(err, &timeout) || len(timeout.Pending) != 1 || timeout.Pending[0] != running.ID {
		t.Fatalf("drain --wait with a job left: %v; want a WaitTimeoutError naming job %d", err, running.ID)
	}

	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- nodesDrainRun(context.Background(), &NodesDrainOptions{
			IO: &IOStreams{Out: out, ErrOut: out}, Store: e.f.Store, Clock: e.f.Clock,
			Name: "n1", Wait: true, Interval: 10 * time.Millisecond,
		})
	}()
	waitFor(t, "the drain to list the job", func() bool { return strings.Contains(out.String(), "still active") })
	e.move(t, running, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "node n1 is drained: no job is active on it\n") {
		t.Errorf("output %q; want it to end saying the node is drained", out.String())
	}
	if err := e.run(t, "nodes", "drain", "n1", "--timeout", "1m"); !errors.As(err, new(*UsageError)) {
		t.Errorf("--timeout without --wait: %v; want a UsageError", err)
	}
}

// registerHealth registers a node with the health figures it reports.
func (e *testEnv) registerHealth(t *testing.T, name string, loadAvg, maxLoadAvg float64, free, reserved int64) *engine.Node {
	t.Helper()
	n, err := e.store.NodeRegister(context.Background(), engine.NodeRegisterParams{Node: engine.Node{
		Name: name, URL: "http://" + name + ":7420", MaxLoad: 4, MaxJobs: 200, Weight: 100, Candidate: true,
		LoadAvg: loadAvg, MaxLoadAvg: maxLoadAvg, MemAvailable: free, ReservedMemory: reserved, Cores: 2,
		Services: []engine.NodeService{{Type: engine.TypeNoop}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNodesListShowsOverloadedNodes(t *testing.T) {
	e := newTestEnv(t)
	busy := e.registerHealth(t, "busy", 9.1, 4, 8<<30, 0)
	calm := e.registerHealth(t, "calm", 9.1, 0, 8<<30, 0) // gate off: never overloaded by load average
	full := e.registerHealth(t, "full", 0.5, 4, 512<<20, 1<<30)

	if err := e.run(t, "nodes"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("busy\tONLINE\t0/4\t0\t100\t\t%s\toverloaded: load average 9.1 above 4\n", rfc3339(&busy.LastSeen)) +
		fmt.Sprintf("calm\tONLINE\t0/4\t0\t100\t\t%s\t\n", rfc3339(&calm.LastSeen)) +
		fmt.Sprintf("full\tONLINE\t0/4\t0\t100\t\t%s\toverloaded: free memory 512MiB under reserve 1GiB\n", rfc3339(&full.LastSeen))
	if got := e.stdout.String(); got != want {
		t.Errorf("nodes printed\n%q\nwant\n%q", got, want)
	}

	if err := e.run(t, "nodes", "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("busy\tONLINE\t0/4\t0\t100\t\t%s\thttp://busy:7420\t200\t9.1/4\t8.0GiB\t2\tnoop\t%s\toverloaded: load average 9.1 above 4\n",
		rfc3339(&busy.LastSeen), rfc3339(&busy.StartedAt)) +
		fmt.Sprintf("calm\tONLINE\t0/4\t0\t100\t\t%s\thttp://calm:7420\t200\t9.1/off\t8.0GiB\t2\tnoop\t%s\t\n",
			rfc3339(&calm.LastSeen), rfc3339(&calm.StartedAt)) +
		fmt.Sprintf("full\tONLINE\t0/4\t0\t100\t\t%s\thttp://full:7420\t200\t0.5/4\t512.0MiB\t2\tnoop\t%s\toverloaded: free memory 512MiB under reserve 1GiB\n",
			rfc3339(&full.LastSeen), rfc3339(&full.StartedAt))
	if got := e.stdout.String(); got != want {
		t.Errorf("nodes -o wide printed\n%q\nwant\n%q", got, want)
	}

	if err := e.run(t, "nodes", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var nodes []struct {
		Name           string  `json:"name"`
		MaxLoadAvg     float64 `json:"max_load_avg"`
		Overloaded     bool    `json:"overloaded"`
		OverloadReason string  `json:"overload_reason"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &nodes); err != nil || len(nodes) != 3 {
		t.Fatalf("nodes -o json: %v\n%s", err, e.stdout.String())
	}
	if n := nodes[0]; !n.Overloaded || n.OverloadReason != "load average 9.1 above 4" || n.MaxLoadAvg != 4 {
		t.Errorf("busy = %+v; want overloaded by its load average above the limit 4", n)
	}
	if n := nodes[1]; n.Overloaded || n.OverloadReason != "" || n.MaxLoadAvg != 0 {
		t.Errorf("calm = %+v; want not overloaded with the gate off", n)
	}
	if n := nodes[2]; !n.Overloaded || !strings.HasPrefix(n.OverloadReason, "free memory ") {
		t.Errorf("full = %+v; want overloaded by low memory", n)
	}
}

func TestNodesListOverloadOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	e.registerHealth(t, "busy", 9.1, 4, 0, 0)
	if err := e.run(t, "nodes"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(e.stdout.String(), "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "NOTE") || !strings.HasSuffix(strings.TrimSpace(lines[1]), "overloaded: load average 9.1 above 4") {
		t.Errorf("nodes on a terminal printed\n%s\nwant a NOTE column saying the node is overloaded and why", e.stdout.String())
	}
}

func TestNodesListJSONWithoutNodes(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "nodes", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(e.stdout.String()); got != "[]" {
		t.Errorf("nodes -o json with no nodes = %q; want []", got)
	}
}

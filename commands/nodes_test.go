package commands

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func (e *testEnv) registerNode(t *testing.T, name string) *engine.Node {
	t.Helper()
	n, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: engine.Node{
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
	e.move(t, e.insert(t, engine.JobInsertParams{Load: 1.5}), engine.StatusRunning)
	if ok, err := e.store.LeaseAcquire(context.Background(), "n1", time.Minute); err != nil || !ok.Held() {
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
	if state() != engine.NodeMaintenance || e.stdout.String() != "n1\tONLINE,MAINTENANCE\n" {
		t.Errorf("after on: %s, printed %q", state(), e.stdout.String())
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeOnline || e.stdout.String() != "n1\tONLINE\n" {
		t.Errorf("after off: %s, printed %q", state(), e.stdout.String())
	}
	// off twice is as harmless as on twice: a note, nothing changed, exit 0.
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err != nil || state() != engine.NodeOnline ||
		e.stdout.String() != "" || e.stderr.String() != "node n1 is out of maintenance already (ONLINE)\n" {
		t.Errorf("off when ONLINE: %v, %s, stdout %q, stderr %q; want a note and success", err, state(), e.stdout.String(), e.stderr.String())
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
	if err := e.run(t, "nodes", "maintenance", "n1", "off"); err != nil || e.stderr.String() != "node n1 is out of maintenance already (OFFLINE)\n" {
		t.Errorf("off twice: %v, stderr %q; want a note and success", err, e.stderr.String())
	}
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}
	if state() != engine.NodeOffline || e.stdout.String() != "n1\tOFFLINE,MAINTENANCE\n" ||
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
		{"on", "node n1: ONLINE → ONLINE,MAINTENANCE\n"},
		{"off", "node n1: ONLINE,MAINTENANCE → ONLINE\n"},
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
	if got, want := e.stdout.String(), "node n1: ERROR → ERROR,MAINTENANCE\n"; got != want {
		t.Errorf("on when ERROR printed %q; want %q", got, want)
	}
}

func TestNodesDrain(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	running := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.insert(t, engine.JobInsertParams{}) // queued: not on the node

	if err := e.run(t, "nodes", "drain", "n1", "-q"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), fmt.Sprintf("%d\n", running.ID); got != want {
		t.Errorf("drain printed %q; want only the active job's id", got)
	}
	if !strings.Contains(e.stderr.String(), "n1\tONLINE,MAINTENANCE\n") {
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
	waitfor.Until(t, 10*time.Second, "the drain to list the job", func() bool { return strings.Contains(out.String(), "still active") })
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
	n, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: engine.Node{
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
	want := fmt.Sprintf("busy\tONLINE,OVERLOADED\t0/4\t0\t100\t\t%s\toverloaded: load average 9.1 above 4; it gets work only when no node under its limit can take it\n", rfc3339(&busy.LastSeen)) +
		fmt.Sprintf("calm\tONLINE\t0/4\t0\t100\t\t%s\t\n", rfc3339(&calm.LastSeen)) +
		fmt.Sprintf("full\tONLINE,OVERLOADED\t0/4\t0\t100\t\t%s\toverloaded: free memory 512MiB under reserve 1GiB; it takes no new work\n", rfc3339(&full.LastSeen))
	if got := e.stdout.String(); got != want {
		t.Errorf("nodes printed\n%q\nwant\n%q", got, want)
	}

	if err := e.run(t, "nodes", "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("busy\tONLINE,OVERLOADED\t0/4\t0\t100\t\t%s\thttp://busy:7420\t200\t9.1/4\t8.0GiB\t2\tnoop\t%s\toverloaded: load average 9.1 above 4; it gets work only when no node under its limit can take it\n",
		rfc3339(&busy.LastSeen), rfc3339(&busy.StartedAt)) +
		fmt.Sprintf("calm\tONLINE\t0/4\t0\t100\t\t%s\thttp://calm:7420\t200\t9.1/off\t8.0GiB\t2\tnoop\t%s\t\n",
			rfc3339(&calm.LastSeen), rfc3339(&calm.StartedAt)) +
		fmt.Sprintf("full\tONLINE,OVERLOADED\t0/4\t0\t100\t\t%s\thttp://full:7420\t200\t0.5/4\t512MiB\t2\tnoop\t%s\toverloaded: free memory 512MiB under reserve 1GiB; it takes no new work\n",
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
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "NOTE") || !strings.HasSuffix(strings.TrimSpace(lines[1]), "overloaded: load average 9.1 above 4; it gets work only when no node under its limit can take it") {
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

// nodeJSON decodes what a node verb prints with -o json.
func nodeJSON(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var nodes []map[string]any
	if err := json.Unmarshal(out, &nodes); err != nil {
		t.Fatalf("-o json printed %q: %v", out, err)
	}
	return nodes
}

func TestNodesMaintenanceJSON(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	e.registerNode(t, "n2")
	e.move(t, e.insert(t, engine.JobInsertParams{Load: 1.5}), engine.StatusRunning)
	for _, c := range []struct {
		sw, state, stderr string
		maintenance       bool
	}{
		{"on", "ONLINE", "n1\tONLINE,MAINTENANCE\n", true},
		{"on", "ONLINE", "node n1 is in maintenance already\n", true},
		{"off", "ONLINE", "n1\tONLINE\n", false},
		{"off", "ONLINE", "node n1 is out of maintenance already (ONLINE)\n", false},
	} {
		if err := e.run(t, "nodes", "maintenance", "n1", c.sw, "-o", "json"); err != nil {
			t.Fatal(err)
		}
		nodes := nodeJSON(t, e.stdout.Bytes())
		if len(nodes) != 1 || nodes[0]["name"] != "n1" || nodes[0]["state"] != c.state ||
			nodes[0]["maintenance"] != c.maintenance || nodes[0]["load"] != 1.5 || nodes[0]["running"] != 1.0 {
			t.Errorf("maintenance %s -o json = %v; want n1 %s with its load", c.sw, nodes, c.state)
		}
		if _, ok := nodes[0]["overloaded"]; !ok {
			t.Errorf("maintenance %s -o json lacks the fields of 'nodes -o json': %v", c.sw, nodes[0])
		}
		if got := e.stderr.String(); got != c.stderr {
			t.Errorf("maintenance %s -o json: stderr %q; want %q", c.sw, got, c.stderr)
		}
	}
}

// silence makes a node's last report lie ago in the past, as if its
// process had stopped then; only the database's clock judges staleness.
func (e *testEnv) silence(t *testing.T, name string, ago time.Duration) {
	t.Helper()
	db, err := sql.Open("sqlite", strings.TrimPrefix(e.f.DSN(), "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`UPDATE nodes SET last_seen = datetime('now', printf('%+.3f seconds', ?), 'subsec') WHERE name = ?`,
		-ago.Seconds(), name)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("no node %s to silence", name)
	}
}

func (e *testEnv) nodeExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := e.store.NodeGet(context.Background(), name)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestNodesRemove(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()

	// A node that looks alive stays unless forced.
	e.registerNode(t, "alive")
	err := e.run(t, "nodes", "rm", "alive")
	if err == nil || !strings.Contains(err.Error(), "node alive is ONLINE and was last seen") ||
		!strings.Contains(err.Error(), "it looks alive; stop it first, or give --force to remove it anyway") || !e.nodeExists(t, "alive") {
		t.Errorf("rm of a live node: %v; want a refusal naming --force, and the node kept", err)
	}
	if err := e.run(t, "nodes", "rm", "alive", "--force"); err != nil || e.stdout.String() != "alive\n" || e.nodeExists(t, "alive") {
		t.Errorf("rm --force of a live node without jobs: %v, stdout %q; want it removed", err, e.stdout.String())
	}

	// A node stopped cleanly (OFFLINE) without jobs goes at once.
	e.registerNode(t, "stopped")
	if err := e.store.NodeSetState(ctx, "stopped", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "nodes", "rm", "stopped"); err != nil || e.stdout.String() != "stopped\n" || e.stderr.String() != "" {
		t.Errorf("rm of an OFFLINE node: %v, stdout %q, stderr %q", err, e.stdout.String(), e.stderr.String())
	}

	// OFFLINE but seen just now, with a job: its process may still run it.
	e.registerNode(t, "n1")
	running := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	if err := e.store.NodeSetState(ctx, "n1", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	err = e.run(t, "nodes", "rm", "n1")
	if err == nil || !strings.Contains(err.Error(), "node n1 still holds 1 job and was seen") ||
		!strings.Contains(err.Error(), "wait until it has been silent for 12s") || !e.nodeExists(t, "n1") ||
		e.get(t, running.ID).Status != engine.StatusRunning {
		t.Errorf("rm of a recently seen node with a job: %v; want a refusal and nothing changed", err)
	}
	if err := e.store.NodeSetState(ctx, "n1", engine.NodeOnline); err != nil {
		t.Fatal(err)
	}
	// --force never takes jobs from a node that is alive.
	err = e.run(t, "nodes", "rm", "n1", "--force")
	if err == nil || !strings.Contains(err.Error(), "drain it first with 'jobctl nodes drain n1 --deadline 0'") ||
		e.get(t, running.ID).Status != engine.StatusRunning {
		t.Errorf("rm --force of a live node with a job: %v; want a refusal pointing to drain", err)
	}

	// Silent for longer than a node may be: its jobs are recovered, then it goes.
	cancelling := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusCancelling)
	e.silence(t, "n1", time.Minute)
	if err := e.run(t, "nodes", "rm", "n1", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	nodes := nodeJSON(t, e.stdout.Bytes())
	if len(nodes) != 1 || nodes[0]["name"] != "n1" || nodes[0]["running"] != 2.0 {
		t.Errorf("rm -o json = %v; want n1 as it was, with its 2 jobs", nodes)
	}
	want := fmt.Sprintf("job %d of node n1 is back in the queue\njob %d of node n1 ended CANCELLED: it was being cancelled\n", running.ID, cancelling.ID)
	if got := e.stderr.String(); got != want {
		t.Errorf("rm stderr %q; want %q", got, want)
	}
	if e.nodeExists(t, "n1") {
		t.Error("n1 is still there")
	}
	if j := e.get(t, running.ID); j.Status != engine.StatusRestart || j.Node != "" || j.Message != "node n1 was removed" {
		t.Errorf("running job after rm: %s on %q, %q; want RESTART off the node", j.Status, j.Node, j.Message)
	}
	// Each job it took off the node is on record, with the node's removal.
	for _, j := range []*engine.Job{running, cancelling} {
		events, err := e.store.EventList(context.Background(), engine.EventListParams{JobID: &j.ID})
		if err != nil || len(events) != 1 || events[0].Verb != engine.EventNodesRm ||
			!strings.HasSuffix(events[0].Detail, "; node n1 was removed") {
			t.Errorf("events of job %d after rm: %+v, %v", j.ID, events, err)
		}
	}
	if events, _ := e.store.EventList(context.Background(), engine.EventListParams{Node: "n1"}); len(events) == 0 ||
		events[len(events)-1].Verb != engine.EventNodesRm {
		t.Errorf("events of node n1 after rm: %+v; want its removal last", events)
	}
	if j := e.get(t, cancelling.ID); j.Status != engine.StatusCancelled {
		t.Errorf("cancelling job after rm: %s; want CANCELLED", j.Status)
	}

	if err := e.run(t, "nodes", "rm", "ghost"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("rm of an unknown node: %v; want not found", err)
	}
	if err := e.run(t, "nodes", "rm"); !errors.As(err, new(*UsageError)) {
		t.Errorf("rm without a name: %v; want a UsageError", err)
	}
}

func TestNodesRemoveTerminal(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	e.registerNode(t, "n1")
	e.silence(t, "n1", time.Minute)
	if err := e.run(t, "nodes", "remove", "n1"); err != nil || e.stdout.String() != "removed node n1\n" {
		t.Errorf("rm on a terminal: %v, %q", err, e.stdout.String())
	}
}

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestNodesDrainDeadlineRequeues(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	e.registerNode(t, "n2")
	running := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	paused := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusPaused)
	cancelling := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusCancelling)

	clock := &manualClock{now: testNow}
	out, errOut := &syncBuffer{}, &syncBuffer{}
	counting := &countingStore{Store: e.store}
	done := make(chan error, 1)
	go func() {
		done <- nodesDrainRun(context.Background(), &NodesDrainOptions{
			IO: &IOStreams{Out: out, ErrOut: errOut}, Store: func(context.Context) (engine.Store, error) { return counting, nil },
			Clock: clock, Name: "n1", Wait: true, Deadline: engine.Ptr(time.Minute), Interval: 5 * time.Millisecond,
			Output: outputOptions{Format: formatTable, Quiet: true},
		})
	}()
	waitfor.Until(t, 10*time.Second, "the drain to list the jobs", func() bool { return strings.Contains(errOut.String(), "3 jobs still active on node n1") })
	// Before the deadline nothing is stopped, however often drain looks.
	polls := counting.lists.Load()
	waitfor.Until(t, 10*time.Second, "more polls", func() bool { return counting.lists.Load() >= polls+3 })
	if j := e.get(t, running.ID); j.Status != engine.StatusRunning {
		t.Fatalf("before the deadline the running job is %s", j.Status)
	}
	clock.advance(time.Minute)
	waitfor.Until(t, 10*time.Second, "the running job to be stopped", func() bool { return e.get(t, running.ID).Status == engine.StatusCancelling })
	if j := e.get(t, running.ID); j.Message != "stopped to go back to the queue: the drain deadline of node n1 passed" {
		t.Errorf("stopped job's message %q", j.Message)
	}
	// The drain stops its jobs one after the other: the paused one too.
	waitfor.Until(t, 10*time.Second, "the paused job to be stopped", func() bool { return e.get(t, paused.ID).Status == engine.StatusCancelling })
	// The node reports the stops; only then do the jobs go back.
	for _, j := range []*engine.Job{running, paused, cancelling} {
		j = e.get(t, j.ID)
		if j.Status != engine.StatusCancelling {
			t.Fatalf("job %d is %s; want CANCELLING", j.ID, j.Status)
		}
		if r := e.get(t, j.ID); r.Status == engine.StatusRestart {
			t.Fatalf("job %d requeued before its node stopped it", j.ID)
		}
		e.move(t, j, engine.StatusCancelled)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, j := range []*engine.Job{running, paused} {
		if got := e.get(t, j.ID); got.Status != engine.StatusRestart || got.Node != "" || got.Message != "requeued: the drain deadline of node n1 passed" {
			t.Errorf("job %d after the drain: %s on %q, %q; want RESTART off the node", j.ID, got.Status, got.Node, got.Message)
		}
	}
	if got := e.get(t, cancelling.ID); got.Status != engine.StatusCancelled {
		t.Errorf("the job the operator cancelled is %s; want it left CANCELLED", got.Status)
	}
	// The drain's stop and requeue of each job are on record.
	for _, j := range []*engine.Job{running, paused} {
		events, err := e.store.EventList(context.Background(), engine.EventListParams{JobID: &j.ID})
		var got []string
		for _, ev := range events {
			got = append(got, ev.Verb+": "+ev.Detail)
		}
		want := []string{
			"nodes drain: " + string(j.Status) + " → CANCELLING; the drain deadline of node n1 passed",
			"nodes drain: CANCELLED → RESTART; the drain deadline of node n1 passed",
		}
		if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events of job %d: %q, %v; want %q", j.ID, got, err, want)
		}
	}
	if got, want := out.String(), fmt.Sprintf("%d\n%d\n%d\n", running.ID, paused.ID, cancelling.ID); got != want {
		t.Errorf("stdout %q; want the active jobs' ids %q", got, want)
	}
	wantErr := "n1\tONLINE,MAINTENANCE\n3 jobs still active on node n1:\n" +
		fmt.Sprintf("deadline passed: stopping 2 jobs on node n1 to put back in the queue: %d, %d\n", running.ID, paused.ID) +
		fmt.Sprintf("job %d is back in the queue\njob %d is back in the queue\n", running.ID, paused.ID) +
		"node n1 is drained: no job is active on it\n"
	if got := errOut.String(); got != wantErr {
		t.Errorf("stderr\n%q\nwant\n%q", got, wantErr)
	}
}

func TestNodesDrainDeadlineZeroAndJSON(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	done := make(chan error, 1)
	go func() { done <- e.run(t, "nodes", "drain", "n1", "--deadline", "0", "-o", "json") }()
	// The node stops the job the drain stopped at once; then it goes back
	// to the queue.
	waitfor.Until(t, 10*time.Second, "the job to be stopped", func() bool { return e.get(t, j.ID).Status == engine.StatusCancelling })
	e.move(t, e.get(t, j.ID), engine.StatusCancelled)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	nodes := nodeJSON(t, e.stdout.Bytes())
	if len(nodes) != 1 || nodes[0]["name"] != "n1" || nodes[0]["state"] != "ONLINE" || nodes[0]["maintenance"] != true || nodes[0]["running"] != 0.0 {
		t.Errorf("drain -o json = %v; want n1 in maintenance with nothing running", nodes)
	}
	if got := e.get(t, j.ID); got.Status != engine.StatusRestart {
		t.Errorf("job after drain --deadline 0: %s; want RESTART", got.Status)
	}
	for _, args := range [][]string{
		{"--deadline", "-1s"},
		{"--deadline", "1m", "--timeout", "30s"},
		{"--deadline", "soon"},
	} {
		if err := e.run(t, append([]string{"nodes", "drain", "n1"}, args...)...); !errors.As(err, new(*UsageError)) {
			t.Errorf("drain %v: %v; want a UsageError", args, err)
		}
	}
}

func TestNodesDrainProgressOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	running := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- nodesDrainRun(context.Background(), &NodesDrainOptions{
			IO: &IOStreams{Out: out, ErrOut: errOut, ErrIsTerminal: true}, Store: e.f.Store, Clock: e.f.Clock,
			Name: "n1", Wait: true, Interval: 5 * time.Millisecond, Output: outputOptions{Format: formatTable},
		})
	}()
	waitfor.Until(t, 10*time.Second, "the progress line", func() bool {
		return strings.Contains(errOut.String(), "\r\x1b[Kdraining node n1: 1 job left · 0s")
	})
	e.move(t, running, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := errOut.String(); !strings.HasSuffix(got, "0s\r\x1b[Knode n1 is drained: no job is active on it\n") {
		t.Errorf("stderr %q; want the progress line cleared before the last line", got)
	}
}

func TestNodesDrainQuietWhenPiped(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	err := e.run(t, "nodes", "drain", "n1", "--wait", "--timeout", "100ms")
	if !errors.As(err, new(*WaitTimeoutError)) || strings.Contains(e.stderr.String(), "\r") {
		t.Errorf("drain --wait piped: %v, stderr %q; want a timeout and no progress drawn", err, e.stderr.String())
	}
}

// nodes shows what the cluster does with each node, judged on the
// database's clock: a node silent past its node lease is LOST and its jobs
// go back to the queue, a missed heartbeat or a late liveness record puts
// it on WATCH, maintenance shows beside the liveness, and a silent node's
// last health report is not shown as news. The table and -o json agree.
func TestNodesShowWhatTheClusterDoes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	e.registerHealth(t, "n1", 9.1, 4, 0, 0) // overloaded when it died: stale news
	e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.silence(t, "n1", 30*time.Second)
	e.registerNode(t, "late")
	e.silence(t, "late", 6*time.Second)
	e.registerNode(t, "missed")
	if err := e.store.NodeSetBeatMissed(ctx, "missed", true); err != nil {
		t.Fatal(err)
	}
	e.registerNode(t, "resting")
	if err := e.store.NodeSetMaintenance(ctx, "resting", true); err != nil {
		t.Fatal(err)
	}
	e.silence(t, "resting", time.Minute)
	e.registerNode(t, "well")

	if err := e.run(t, "nodes"); err != nil {
		t.Fatal(err)
	}
	type row struct{ state, note string }
	table := map[string]row{}
	for _, line := range strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n") {
		f := strings.Split(line, "\t")
		table[f[0]] = row{f[1], f[len(f)-1]}
	}
	silent := regexp.MustCompile(`^silent for (\d+m)?\d+s, past its node lease 10s: it has stopped its runs`)
	for name, want := range map[string]struct {
		state string
		note  *regexp.Regexp
	}{
		"n1":      {"LOST", regexp.MustCompile(silent.String() + `; its 1 job is being put back in the queue$`)},
		"late":    {"WATCH", regexp.MustCompile(`^late recording that it is alive: last [0-9.]+s ago, node lease 10s$`)},
		"missed":  {"WATCH", regexp.MustCompile(`^missed a heartbeat [0-9.]+m?s ago; a second miss marks it OFFLINE$`)},
		"resting": {"LOST,MAINTENANCE", regexp.MustCompile(silent.String() + `$`)},
		"well":    {"ONLINE", regexp.MustCompile(`^$`)},
	} {
		if got := table[name]; got.state != want.state || !want.note.MatchString(got.note) {
			t.Errorf("node %s: %q, note %q; want %s, a note matching %s", name, got.state, got.note, want.state, want.note)
		}
	}

	if err := e.run(t, "nodes", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var views []struct {
		Name        string `json:"name"`
		State       string `json:"state"`
		Maintenance bool   `json:"maintenance"`
		Overloaded  bool   `json:"overloaded"`
		Note        string `json:"note"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &views); err != nil || len(views) != 5 {
		t.Fatalf("nodes -o json: %v\n%s", err, e.stdout.String())
	}
	for _, v := range views {
		label := v.State
		if v.Maintenance {
			label += ",MAINTENANCE"
		}
		if v.Overloaded {
			label += ",OVERLOADED"
		}
		// The notes were read a moment apart: their ages may differ.
		digits := regexp.MustCompile(`[0-9.]+m?s`)
		if got := table[v.Name]; label != got.state || digits.ReplaceAllString(v.Note, "T") != digits.ReplaceAllString(got.note, "T") {
			t.Errorf("node %s: -o json says %s, %q; the table %s, %q", v.Name, label, v.Note, got.state, got.note)
		}
	}
}

// A job taken off a removed node runs again from the start, so the
// children of its lost attempt are cancelled with it, as the dispatcher
// does for a silent node: a child left running would run beside the
// children of the next attempt.
func TestNodesRemoveCancelsTheChildrenOfTheJobsItRecovers(t *testing.T) {
	e := newTestEnv(t)
	e.registerNode(t, "n1")
	parent := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	queued := e.insert(t, engine.JobInsertParams{ParentID: &parent.ID})
	running := e.insert(t, engine.JobInsertParams{ParentID: &parent.ID})
	running = e.moveOn(t, running, "n2")
	done := e.move(t, e.insert(t, engine.JobInsertParams{ParentID: &parent.ID}), engine.StatusRunning, engine.StatusFinished)
	e.silence(t, "n1", time.Minute)

	if err := e.run(t, "nodes", "rm", "n1"); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, parent.ID); j.Status != engine.StatusRestart {
		t.Errorf("parent after rm: %s; want RESTART", j.Status)
	}
	if j := e.get(t, queued.ID); j.Status != engine.StatusCancelled {
		t.Errorf("queued child after rm: %s; want CANCELLED", j.Status)
	}
	if j := e.get(t, running.ID); j.Status != engine.StatusCancelling || j.Node != "n2" {
		t.Errorf("running child after rm: %s on %q; want CANCELLING on n2, for its node to stop", j.Status, j.Node)
	}
	if j := e.get(t, done.ID); j.Status != engine.StatusFinished {
		t.Errorf("finished child after rm: %s; want it left FINISHED", j.Status)
	}
}

// moveOn is move for a job started on node instead of n1.
func (e *testEnv) moveOn(t *testing.T, j *engine.Job, node string, path ...engine.Status) *engine.Job {
	t.Helper()
	j, err := e.store.JobUpdate(context.Background(), engine.QueuedStartUpdate(j, node))
	if err != nil {
		t.Fatal(err)
	}
	return e.move(t, j, path...)
}

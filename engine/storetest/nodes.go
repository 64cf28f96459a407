package storetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var nodeTests = []subtest{
	{"NodeRegisterFields", testNodeRegisterFields},
	{"NodeRegisterOnlineConflict", testNodeRegisterOnlineConflict},
	{"NodeRegisterStaleTakeover", testNodeRegisterStaleTakeover},
	{"NodeRegisterKeepsMaintenance", testNodeRegisterKeepsMaintenance},
	{"NodeRegisterInvalid", testNodeRegisterInvalid},
	{"NodeTouchAndState", testNodeTouchAndState},
	{"NodeNotFound", testNodeNotFound},
	{"NodeListLoadAndDispatcher", testNodeListLoadAndDispatcher},
}

func sampleNode(name string) engine.Node {
	return engine.Node{
		Name:            name,
		URL:             "http://" + name + ":7420",
		MaxLoad:         8,
		MaxJobs:         200,
		Weight:          100,
		Warmup:          engine.Duration(10 * time.Minute),
		AcceptExceeding: true,
		Candidate:       true,
		Services: []engine.NodeService{
			{Type: "noop"},
			{Type: "encode", Load: 2.5, Timeout: engine.Duration(time.Hour)},
		},
		LoadAvg:        0.75,
		MaxLoadAvg:     16,
		MemAvailable:   8 << 30,
		ReservedMemory: 512 << 20,
		Cores:          4,
	}
}

func register(t *testing.T, s engine.Store, n engine.Node, staleAfter time.Duration) *engine.Node {
	t.Helper()
	got, err := s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: n, StaleAfter: staleAfter})
	if err != nil {
		t.Fatalf("NodeRegister(%s): %v", n.Name, err)
	}
	return got
}

func getNode(t *testing.T, s engine.Store, name string) *engine.Node {
	t.Helper()
	n, err := s.NodeGet(t.Context(), name)
	if err != nil {
		t.Fatalf("NodeGet(%s): %v", name, err)
	}
	return n
}

// wantConfig compares what a node registered with what the store holds.
func wantConfig(t *testing.T, got *engine.Node, want engine.Node) {
	t.Helper()
	want.State, want.StartedAt, want.LastSeen = got.State, got.StartedAt, got.LastSeen
	want.Load, want.Running, want.Dispatcher = got.Load, got.Running, got.Dispatcher
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("stored node differs:\n got  %+v\n want %+v", *got, want)
	}
}

func testNodeRegisterFields(t *testing.T, s engine.Store) {
	before := dbNow(t, s)
	n := register(t, s, sampleNode("alpha"), time.Minute)
	after := dbNow(t, s)
	wantConfig(t, n, sampleNode("alpha"))
	if n.State != engine.NodeOnline {
		t.Errorf("State = %s, want ONLINE", n.State)
	}
	wantUTC(t, "StartedAt", n.StartedAt)
	wantUTC(t, "LastSeen", n.LastSeen)
	if !within(n.StartedAt, before, after) || !within(n.LastSeen, before, after) {
		t.Errorf("StartedAt %s, LastSeen %s: want the database time of registering, within [%s, %s]", n.StartedAt, n.LastSeen, before, after)
	}
	if n.Load != 0 || n.Running != 0 || n.Dispatcher {
		t.Errorf("a new node has load %v, running %d, dispatcher %v", n.Load, n.Running, n.Dispatcher)
	}
	if got := getNode(t, s, "alpha"); !reflect.DeepEqual(got, n) {
		t.Errorf("NodeGet differs from NodeRegister:\n get      %+v\n register %+v", got, n)
	}

	bare := register(t, s, engine.Node{Name: "bare"}, time.Minute)
	if bare.Services == nil || len(bare.Services) != 0 {
		t.Errorf("Services = %#v, want an empty, non-nil list", bare.Services)
	}
}

func testNodeRegisterOnlineConflict(t *testing.T, s engine.Store) {
	first := register(t, s, sampleNode("alpha"), time.Minute)
	impostor := sampleNode("alpha")
	impostor.URL = "http://elsewhere:7420"
	_, err := s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: impostor, StaleAfter: time.Minute})
	wantErrIs(t, "registering a live node's name", err, engine.ErrNodeOnline)
	if err != nil && !strings.Contains(err.Error(), "alpha") {
		t.Errorf("error %q does not name the node", err)
	}
	if got := getNode(t, s, "alpha"); !reflect.DeepEqual(got, first) {
		t.Errorf("a refused registration changed the node:\n now  %+v\n want %+v", got, first)
	}

	// A live node in maintenance or in error still holds its name.
	for _, st := range []engine.NodeState{engine.NodeMaintenance, engine.NodeError} {
		if err := s.NodeSetState(t.Context(), "alpha", st); err != nil {
			t.Fatal(err)
		}
		_, err := s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: impostor, StaleAfter: time.Minute})
		wantErrIs(t, "registering the name of a live "+string(st)+" node", err, engine.ErrNodeOnline)
	}

	// An OFFLINE node is taken over even when seen recently: it was stopped
	// cleanly or marked down.
	if err := s.NodeSetState(t.Context(), "alpha", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	n := register(t, s, impostor, time.Minute)
	if n.State != engine.NodeOnline || n.URL != impostor.URL {
		t.Errorf("takeover of an OFFLINE node: state %s url %s", n.State, n.URL)
	}
}

// Maintenance is the operator's word: it outlives a restart of the node.
func testNodeRegisterKeepsMaintenance(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("alpha"), 0)
	if err := s.NodeSetState(t.Context(), "alpha", engine.NodeMaintenance); err != nil {
		t.Fatal(err)
	}
	// StaleAfter 0: the row counts as gone at once, as after a crash.
	if n := register(t, s, sampleNode("alpha"), 0); n.State != engine.NodeMaintenance {
		t.Errorf("a node in maintenance came back %s after a restart", n.State)
	}
}

func testNodeRegisterStaleTakeover(t *testing.T, s engine.Store) {
	const staleAfter = 300 * time.Millisecond
	first := register(t, s, sampleNode("alpha"), staleAfter)
	_, err := s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: sampleNode("alpha"), StaleAfter: time.Hour})
	wantErrIs(t, "registering while the row is fresh", err, engine.ErrNodeOnline)

	// The process died without a word: once its last_seen is older than
	// StaleAfter on the database clock, a new process takes the name.
	waitDBClockPast(t, s, first.LastSeen.Add(staleAfter))
	successor := sampleNode("alpha")
	successor.URL = "http://successor:7420"
	successor.MaxLoad = 2
	successor.Services = []engine.NodeService{{Type: "sleep"}}
	n := register(t, s, successor, staleAfter)
	wantConfig(t, n, successor)
	if n.State != engine.NodeOnline || !n.StartedAt.After(first.StartedAt) || !n.LastSeen.After(first.LastSeen) {
		t.Errorf("takeover: state %s started %s (was %s) last seen %s (was %s)", n.State, n.StartedAt, first.StartedAt, n.LastSeen, first.LastSeen)
	}
}

func testNodeRegisterInvalid(t *testing.T, s engine.Store) {
	for what, n := range map[string]engine.Node{
		"an empty name":     {},
		"negative max jobs": {Name: "alpha", MaxJobs: -1},
		"negative max load": {Name: "alpha", MaxLoad: -1},
	} {
		if _, err := s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: n, StaleAfter: time.Minute}); err == nil {
			t.Errorf("NodeRegister accepted %s", what)
		}
	}
	if nodes, err := s.NodeList(t.Context()); err != nil || len(nodes) != 0 {
		t.Errorf("after a refused registration: %d nodes, %v", len(nodes), err)
	}
}

func testNodeTouchAndState(t *testing.T, s engine.Store) {
	n := register(t, s, sampleNode("alpha"), time.Minute)
	before := dbNow(t, s)
	err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha", LoadAvg: 3.25, MemAvailable: 123456789, Cores: 16})
	if err != nil {
		t.Fatal(err)
	}
	after := dbNow(t, s)
	got := getNode(t, s, "alpha")
	if got.LoadAvg != 3.25 || got.MemAvailable != 123456789 || got.Cores != 16 {
		t.Errorf("touch: load avg %v mem %d cores %d", got.LoadAvg, got.MemAvailable, got.Cores)
	}
	if !within(got.LastSeen, before, after) {
		t.Errorf("touch: LastSeen %s, want within [%s, %s]", got.LastSeen, before, after)
	}
	if !got.StartedAt.Equal(n.StartedAt) || got.State != engine.NodeOnline || got.URL != n.URL {
		t.Errorf("touch changed more than health and last_seen: %+v", got)
	}

	if err := s.NodeSetState(t.Context(), "alpha", engine.NodeMaintenance); err != nil {
		t.Fatal(err)
	}
	if got := getNode(t, s, "alpha"); got.State != engine.NodeMaintenance {
		t.Errorf("State = %s, want MAINTENANCE", got.State)
	}
	// Touching does not undo an operator's state.
	if err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha"}); err != nil {
		t.Fatal(err)
	}
	if got := getNode(t, s, "alpha"); got.State != engine.NodeMaintenance {
		t.Errorf("after touch: State = %s, want MAINTENANCE", got.State)
	}
	err = s.NodeSetState(t.Context(), "alpha", engine.NodeState("BOGUS"))
	if err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("NodeSetState(BOGUS) = %v, want a refusal", err)
	}
}

func testNodeNotFound(t *testing.T, s engine.Store) {
	_, err := s.NodeGet(t.Context(), "ghost")
	var nf *engine.NotFoundError
	if !errors.As(err, &nf) || nf.What != "node" || nf.ID != "ghost" {
		t.Errorf("NodeGet(ghost) = %v, want *NotFoundError for node ghost", err)
	}
	wantErrIs(t, "NodeTouch(ghost)", s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "ghost"}), engine.ErrNotFound)
	wantErrIs(t, "NodeSetState(ghost)", s.NodeSetState(t.Context(), "ghost", engine.NodeOffline), engine.ErrNotFound)
}

func testNodeListLoadAndDispatcher(t *testing.T, s engine.Store) {
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		register(t, s, sampleNode(name), time.Minute)
	}
	start(t, s, queued(t, s, 1.5), "alpha")
	move(t, s, start(t, s, queued(t, s, 2), "alpha"), engine.StatusPaused, nil)
	start(t, s, queued(t, s, 4), "charlie")
	queued(t, s, 100)
	if ok, err := s.LeaseAcquire(t.Context(), "bravo", time.Minute); err != nil || !ok {
		t.Fatalf("LeaseAcquire(bravo) = %v, %v", ok, err)
	}

	nodes, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type live struct {
		Name       string
		Load       float64
		Running    int
		Dispatcher bool
	}
	var got []live
	for _, n := range nodes {
		got = append(got, live{n.Name, n.Load, n.Running, n.Dispatcher})
	}
	want := []live{{"alpha", 3.5, 2, false}, {"bravo", 0, 0, true}, {"charlie", 4, 1, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NodeList = %+v, want %+v", got, want)
	}
	if len(nodes) == 3 {
		wantConfig(t, nodes[0], sampleNode("alpha"))
		if one := getNode(t, s, "alpha"); !reflect.DeepEqual(one, nodes[0]) {
			t.Errorf("NodeGet differs from NodeList:\n get  %+v\n list %+v", one, nodes[0])
		}
	}

	// A released lease makes nobody the dispatcher.
	if ok, err := s.LeaseRelease(t.Context(), "bravo"); err != nil || !ok {
		t.Fatalf("LeaseRelease(bravo) = %v, %v", ok, err)
	}
	if b := getNode(t, s, "bravo"); b.Dispatcher {
		t.Error("bravo is still the dispatcher after releasing the lease")
	}
}

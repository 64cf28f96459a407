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
	{"NodeMaintenanceOutlivesHealth", testNodeMaintenanceOutlivesHealth},
	{"NodeSetStateRefusesMaintenance", testNodeSetStateRefusesMaintenance},
	{"NodeListShowsMaintenanceOnlyOnline", testNodeListShowsMaintenanceOnlyOnline},
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
	want.State, want.Maintenance, want.StartedAt, want.LastSeen = got.State, got.Maintenance, got.StartedAt, got.LastSeen
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
	if n.State != engine.NodeOnline || n.Maintenance {
		t.Errorf("State = %s, Maintenance = %v; want ONLINE without maintenance", n.State, n.Maintenance)
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

	// Maintenance is the operator's to set, never the registering process's.
	eager := sampleNode("eager")
	eager.Maintenance = true
	if n := register(t, s, eager, time.Minute); n.Maintenance || n.State != engine.NodeOnline {
		t.Errorf("a new node asking for maintenance: State %s, Maintenance %v; want ONLINE without", n.State, n.Maintenance)
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
	setMaintenance(t, s, "alpha", true)
	_, err = s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: impostor, StaleAfter: time.Minute})
	wantErrIs(t, "registering the name of a live node in maintenance", err, engine.ErrNodeOnline)
	setMaintenance(t, s, "alpha", false)
	if err := s.NodeSetState(t.Context(), "alpha", engine.NodeError); err != nil {
		t.Fatal(err)
	}
	_, err = s.NodeRegister(t.Context(), engine.NodeRegisterParams{Node: impostor, StaleAfter: time.Minute})
	wantErrIs(t, "registering the name of a live ERROR node", err, engine.ErrNodeOnline)

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

func setMaintenance(t *testing.T, s engine.Store, name string, on bool) {
	t.Helper()
	if err := s.NodeSetMaintenance(t.Context(), name, on); err != nil {
		t.Fatalf("NodeSetMaintenance(%s, %v): %v", name, on, err)
	}
}

func setState(t *testing.T, s engine.Store, name string, state engine.NodeState) {
	t.Helper()
	if err := s.NodeSetState(t.Context(), name, state); err != nil {
		t.Fatalf("NodeSetState(%s, %s): %v", name, state, err)
	}
}

// wantState checks the state a node shows and its maintenance flag.
func wantState(t *testing.T, what string, n *engine.Node, state engine.NodeState, maintenance bool) {
	t.Helper()
	if n.State != state || n.Maintenance != maintenance {
		t.Errorf("%s: State %s, Maintenance %v; want %s, %v", what, n.State, n.Maintenance, state, maintenance)
	}
}

// Maintenance is the operator's word: it outlives a restart of the node,
// whether the process stopped cleanly or crashed.
func testNodeRegisterKeepsMaintenance(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("alpha"), 0)
	setMaintenance(t, s, "alpha", true)
	// StaleAfter 0: the row counts as gone at once, as after a crash.
	wantState(t, "after a crash and restart", register(t, s, sampleNode("alpha"), 0), engine.NodeMaintenance, true)

	// A clean shutdown marks the node OFFLINE; the next process takes the
	// row over at once and finds the flag still on.
	setState(t, s, "alpha", engine.NodeOffline)
	wantState(t, "after a clean restart", register(t, s, sampleNode("alpha"), time.Hour), engine.NodeMaintenance, true)

	// A takeover does not set the flag either.
	setMaintenance(t, s, "alpha", false)
	setState(t, s, "alpha", engine.NodeOffline)
	wantState(t, "restart out of maintenance", register(t, s, sampleNode("alpha"), time.Hour), engine.NodeOnline, false)
}

// Health writes, the node's own and the heartbeat monitor's, never clear an
// operator's maintenance, and the flag never changes the stored health.
func testNodeMaintenanceOutlivesHealth(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("alpha"), time.Minute)
	setMaintenance(t, s, "alpha", true)
	wantState(t, "maintenance on", getNode(t, s, "alpha"), engine.NodeMaintenance, true)
	// Setting it twice is no error.
	setMaintenance(t, s, "alpha", true)

	setState(t, s, "alpha", engine.NodeOffline)
	wantState(t, "marked OFFLINE in maintenance", getNode(t, s, "alpha"), engine.NodeOffline, true)
	setState(t, s, "alpha", engine.NodeOnline)
	wantState(t, "back ONLINE in maintenance", getNode(t, s, "alpha"), engine.NodeMaintenance, true)
	setState(t, s, "alpha", engine.NodeError)
	wantState(t, "ERROR in maintenance", getNode(t, s, "alpha"), engine.NodeError, true)

	// Clearing the flag leaves the health as it is: an ERROR node stays so.
	setMaintenance(t, s, "alpha", false)
	wantState(t, "maintenance off while ERROR", getNode(t, s, "alpha"), engine.NodeError, false)
	setState(t, s, "alpha", engine.NodeOnline)
	wantState(t, "back ONLINE", getNode(t, s, "alpha"), engine.NodeOnline, false)
}

func testNodeSetStateRefusesMaintenance(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("alpha"), time.Minute)
	err := s.NodeSetState(t.Context(), "alpha", engine.NodeMaintenance)
	if err == nil || errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "NodeSetMaintenance") {
		t.Errorf("NodeSetState(MAINTENANCE) = %v, want a refusal pointing to NodeSetMaintenance", err)
	}
	wantState(t, "after the refusal", getNode(t, s, "alpha"), engine.NodeOnline, false)
}

// The list shows MAINTENANCE only for a node that is ONLINE; the flag is
// there for every node that has it.
func testNodeListShowsMaintenanceOnlyOnline(t *testing.T, s engine.Store) {
	for _, name := range []string{"alpha", "bravo", "charlie", "delta"} {
		register(t, s, sampleNode(name), time.Minute)
	}
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		setMaintenance(t, s, name, true)
	}
	setState(t, s, "bravo", engine.NodeOffline)
	setState(t, s, "charlie", engine.NodeError)

	nodes, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type shown struct {
		Name        string
		State       engine.NodeState
		Maintenance bool
	}
	var got []shown
	for _, n := range nodes {
		got = append(got, shown{n.Name, n.State, n.Maintenance})
	}
	want := []shown{
		{"alpha", engine.NodeMaintenance, true},
		{"bravo", engine.NodeOffline, true},
		{"charlie", engine.NodeError, true},
		{"delta", engine.NodeOnline, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NodeList = %+v, want %+v", got, want)
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

	setMaintenance(t, s, "alpha", true)
	// Touching does not undo an operator's maintenance, nor another state.
	if err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "after touch", getNode(t, s, "alpha"), engine.NodeMaintenance, true)
	setState(t, s, "alpha", engine.NodeError)
	if err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "ERROR after touch", getNode(t, s, "alpha"), engine.NodeError, true)
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
	for _, on := range []bool{true, false} {
		err := s.NodeSetMaintenance(t.Context(), "ghost", on)
		wantErrIs(t, "NodeSetMaintenance(ghost)", err, engine.ErrNotFound)
		if !errors.As(err, &nf) || nf.What != "node" || nf.ID != "ghost" {
			t.Errorf("NodeSetMaintenance(ghost, %v) = %v, want *NotFoundError for node ghost", on, err)
		}
	}
}

func testNodeListLoadAndDispatcher(t *testing.T, s engine.Store) {
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		register(t, s, sampleNode(name), time.Minute)
	}
	start(t, s, queued(t, s, 1.5), "alpha")
	admin(t, s, start(t, s, queued(t, s, 2), "alpha"), engine.VerbPause)
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

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
	{"NodeRegisterSameHostRestart", testNodeRegisterSameHostRestart},
	{"NodeRegisterOlderRow", testNodeRegisterOlderRow},
	{"NodeClaimGuarded", testNodeClaimGuarded},
	{"NodeTouchByATakenOverProcess", testNodeTouchByATakenOverProcess},
	{"NodeTouchAndState", testNodeTouchAndState},
	{"NodeNotFound", testNodeNotFound},
	{"NodeListLoadAndDispatcher", testNodeListLoadAndDispatcher},
	{"NodeBeatMissed", testNodeBeatMissed},
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
		Lease:          engine.Duration(10 * time.Second),
		Process:        engine.NodeProcess{Host: "boot-1", Hostname: "host-1", PID: 100, StartTime: 5000},
	}
}

// register registers n as a process whose predecessor, if any, is alive.
func register(t *testing.T, s engine.Store, n engine.Node) *engine.Node {
	t.Helper()
	got, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: n, ProcessGone: never})
	if err != nil {
		t.Fatalf("RegisterNode(%s): %v", n.Name, err)
	}
	return got
}

func never(engine.NodeProcess) bool { return false }

// reregister registers n as a new process (pid one higher) on the same host,
// which finds its predecessor gone.
func reregister(t *testing.T, s engine.Store, n engine.Node) *engine.Node {
	t.Helper()
	old := getNode(t, s, n.Name).Process
	n.Process = old
	n.Process.PID++
	got, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: n,
		ProcessGone: func(p engine.NodeProcess) bool { return p == old }})
	if err != nil {
		t.Fatalf("RegisterNode(%s) after its process died: %v", n.Name, err)
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
	if want.RunningUsage == nil {
		want.RunningUsage = []engine.LiveUsage{} // a registered process runs nothing yet
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("stored node differs:\n got  %+v\n want %+v", *got, want)
	}
}

func testNodeRegisterFields(t *testing.T, s engine.Store) {
	before := dbNow(t, s)
	n := register(t, s, sampleNode("alpha"))
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
		t.Errorf("NodeGet differs from RegisterNode:\n get      %+v\n register %+v", got, n)
	}

	bare := register(t, s, engine.Node{Name: "bare"})
	if bare.Services == nil || len(bare.Services) != 0 {
		t.Errorf("Services = %#v, want an empty, non-nil list", bare.Services)
	}

	// Maintenance is the operator's to set, never the registering process's.
	eager := sampleNode("eager")
	eager.Maintenance = true
	if n := register(t, s, eager); n.Maintenance || n.State != engine.NodeOnline {
		t.Errorf("a new node asking for maintenance: State %s, Maintenance %v; want ONLINE without", n.State, n.Maintenance)
	}
}

func testNodeRegisterOnlineConflict(t *testing.T, s engine.Store) {
	first := register(t, s, sampleNode("alpha"))
	impostor := sampleNode("alpha")
	impostor.URL = "http://elsewhere:7420"
	impostor.Process = engine.NodeProcess{Host: "boot-2", Hostname: "host-2", PID: 7, StartTime: 1}
	asked := false
	_, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: impostor,
		ProcessGone: func(engine.NodeProcess) bool { asked = true; return true }})
	wantErrIs(t, "registering a live node's name", err, engine.ErrNodeOnline)
	if err != nil {
		for _, part := range []string{`"alpha"`, "pid 100", "host-1", "until the name is free"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not say %s", err, part)
			}
		}
	}
	if asked {
		t.Error("the store asked whether a process on another host is gone")
	}
	if got := getNode(t, s, "alpha"); !reflect.DeepEqual(got, first) {
		t.Errorf("a refused registration changed the node:\n now  %+v\n want %+v", got, first)
	}

	// A live node in maintenance or in error still holds its name.
	setMaintenance(t, s, "alpha", true)
	_, err = engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: impostor})
	wantErrIs(t, "registering the name of a live node in maintenance", err, engine.ErrNodeOnline)
	setMaintenance(t, s, "alpha", false)
	if err := s.NodeSetState(t.Context(), "alpha", engine.NodeError); err != nil {
		t.Fatal(err)
	}
	_, err = engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: impostor})
	wantErrIs(t, "registering the name of a live ERROR node", err, engine.ErrNodeOnline)

	// Heartbeats marking a node OFFLINE do not free its name: the process
	// may still run its jobs.
	setState(t, s, "alpha", engine.NodeOffline)
	_, err = engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: impostor})
	wantErrIs(t, "registering the name of a recently seen OFFLINE node", err, engine.ErrNodeOnline)
}

// testNodeRegisterSameHostRestart: a process on the same host takes the
// name over at once when the former one is gone, and never while it lives.
func testNodeRegisterSameHostRestart(t *testing.T, s engine.Store) {
	first := register(t, s, sampleNode("alpha"))
	again := sampleNode("alpha")
	again.Process.PID = 101
	var asked []engine.NodeProcess
	_, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: again,
		ProcessGone: func(p engine.NodeProcess) bool { asked = append(asked, p); return false }})
	wantErrIs(t, "registering while the former process on this host lives", err, engine.ErrNodeOnline)
	if len(asked) != 1 || asked[0] != first.Process {
		t.Errorf("asked about %v, want the former process %v", asked, first.Process)
	}
	successor := reregister(t, s, sampleNode("alpha"))
	if successor.Process.PID != 101 || successor.State != engine.NodeOnline {
		t.Errorf("after the restart: %s held by %v, want ONLINE by pid 101", successor.State, successor.Process)
	}
	// The successor's identity is what a later restart is checked against:
	// one that still thinks pid 100 held the name is refused.
	late := sampleNode("alpha")
	late.Process.PID = 102
	_, err = engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: late,
		ProcessGone: func(p engine.NodeProcess) bool { return p.PID == 100 }})
	wantErrIs(t, "a second restart racing for the name", err, engine.ErrNodeOnline)
	// A row marked OFFLINE by a clean shutdown is restarted the same way.
	setState(t, s, "alpha", engine.NodeOffline)
	if n := reregister(t, s, sampleNode("alpha")); n.Process.PID != 102 {
		t.Errorf("restart after a clean stop: held by %v", n.Process)
	}
}

// testNodeRegisterOlderRow: a row without a process or a lease (written by
// an older release) is never taken by identity, and shows the default lease.
func testNodeRegisterOlderRow(t *testing.T, s engine.Store) {
	old := sampleNode("alpha")
	old.Process, old.Lease = engine.NodeProcess{}, 0
	if n := register(t, s, old); n.LeaseOf() != engine.DefaultNodeLease || n.Lease != 0 {
		t.Errorf("a row without a lease: Lease %v, LeaseOf %s; want 0 and the default", n.Lease, n.LeaseOf())
	}
	_, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: sampleNode("alpha"),
		ProcessGone: func(engine.NodeProcess) bool { return true }})
	wantErrIs(t, "registering over a live row of unknown process", err, engine.ErrNodeOnline)
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
	register(t, s, sampleNode("alpha"))
	setMaintenance(t, s, "alpha", true)
	wantState(t, "after a crash and restart", reregister(t, s, sampleNode("alpha")), engine.NodeMaintenance, true)

	// A clean shutdown marks the node OFFLINE; the next process takes the
	// row over and finds the flag still on.
	setState(t, s, "alpha", engine.NodeOffline)
	wantState(t, "after a clean restart", reregister(t, s, sampleNode("alpha")), engine.NodeMaintenance, true)

	// A takeover does not set the flag either.
	setMaintenance(t, s, "alpha", false)
	setState(t, s, "alpha", engine.NodeOffline)
	wantState(t, "restart out of maintenance", reregister(t, s, sampleNode("alpha")), engine.NodeOnline, false)
}

// Health writes, the node's own and the heartbeat monitor's, never clear an
// operator's maintenance, and the flag never changes the stored health.
func testNodeMaintenanceOutlivesHealth(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("alpha"))
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
	register(t, s, sampleNode("alpha"))
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
		register(t, s, sampleNode(name))
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
	short := sampleNode("alpha")
	short.Lease = engine.Duration(200 * time.Millisecond)
	first := register(t, s, short)
	elsewhere := sampleNode("alpha")
	elsewhere.Process = engine.NodeProcess{Host: "boot-2", Hostname: "host-2", PID: 7, StartTime: 1}
	_, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: elsewhere})
	wantErrIs(t, "registering while the row is fresh", err, engine.ErrNodeOnline)

	// The process died without a word: once its last_seen is older than
	// its node lease and the margin on the database clock, a process on
	// another host takes the name.
	waitDBClockPast(t, s, first.LastSeen.Add(first.GoneAfter()))
	successor := elsewhere
	successor.URL = "http://successor:7420"
	successor.MaxLoad = 2
	successor.Services = []engine.NodeService{{Type: "sleep"}}
	n := register(t, s, successor)
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
		"negative lease":    {Name: "alpha", Lease: -1},
	} {
		if _, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: n}); err == nil {
			t.Errorf("RegisterNode accepted %s", what)
		}
	}
	if nodes, err := s.NodeList(t.Context()); err != nil || len(nodes) != 0 {
		t.Errorf("after a refused registration: %d nodes, %v", len(nodes), err)
	}
}

func testNodeTouchAndState(t *testing.T, s engine.Store) {
	n := register(t, s, sampleNode("alpha"))
	before := dbNow(t, s)
	touched, err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha", LoadAvg: 3.25, MemAvailable: 123456789, Cores: 16})
	if err != nil {
		t.Fatal(err)
	}
	if want := (engine.NodeTouched{State: engine.NodeOnline}); touched != want {
		t.Errorf("touch returned %+v, want %+v", touched, want)
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
	// Touching does not undo an operator's maintenance, nor another state,
	// and tells the node of both.
	touched, err = s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (engine.NodeTouched{State: engine.NodeOnline, Maintenance: true}); touched != want {
		t.Errorf("touch in maintenance returned %+v, want %+v", touched, want)
	}
	wantState(t, "after touch", getNode(t, s, "alpha"), engine.NodeMaintenance, true)
	setState(t, s, "alpha", engine.NodeError)
	touched, err = s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (engine.NodeTouched{State: engine.NodeError, Maintenance: true}); touched != want {
		t.Errorf("touch of an ERROR node returned %+v, want %+v", touched, want)
	}
	wantState(t, "ERROR after touch", getNode(t, s, "alpha"), engine.NodeError, true)
	setState(t, s, "alpha", engine.NodeOffline)
	setMaintenance(t, s, "alpha", false)
	touched, err = s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (engine.NodeTouched{State: engine.NodeOffline}); touched != want {
		t.Errorf("touch of an OFFLINE node returned %+v, want %+v", touched, want)
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
	_, err = s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "ghost"})
	wantErrIs(t, "NodeTouch(ghost)", err, engine.ErrNotFound)
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
		register(t, s, sampleNode(name))
	}
	start(t, s, queued(t, s, 1.5), "alpha")
	admin(t, s, start(t, s, queued(t, s, 2), "alpha"), engine.VerbPause)
	start(t, s, queued(t, s, 4), "charlie")
	queued(t, s, 100)
	if ok, err := s.LeaseAcquire(t.Context(), "bravo", time.Minute); err != nil || !ok.Held() {
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

// testNodeTouchByATakenOverProcess: a touch that names its process keeps
// the row alive only while the row names that process.
func testNodeTouchByATakenOverProcess(t *testing.T, s engine.Store) {
	first := register(t, s, sampleNode("alpha")).Process
	touch := func(p *engine.NodeProcess) error {
		_, err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha", Process: p})
		return err
	}
	if err := touch(&first); err != nil {
		t.Fatalf("touch by the registered process: %v", err)
	}
	second := reregister(t, s, sampleNode("alpha")).Process
	before := getNode(t, s, "alpha").LastSeen
	err := touch(&first)
	wantErrIs(t, "touch by the process whose name was taken over", err, engine.ErrNodeOnline)
	if err != nil && !strings.Contains(err.Error(), "pid 101") {
		t.Errorf("error %q does not name the process that holds the name", err)
	}
	if got := getNode(t, s, "alpha").LastSeen; !got.Equal(before) {
		t.Errorf("a refused touch moved last_seen from %s to %s", before, got)
	}
	if err := touch(&second); err != nil {
		t.Errorf("touch by the new process: %v", err)
	}
	if err := touch(nil); err != nil {
		t.Errorf("touch without a process: %v", err)
	}
}

// A missed heartbeat is kept with the database's time of the first miss in
// a row, until an answered heartbeat, a health write or a registration
// clears it; the maintenance flag and the health state stay as they were.
func testNodeBeatMissed(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("alpha"))
	register(t, s, sampleNode("bravo"))
	setMaintenance(t, s, "alpha", true)
	if n := getNode(t, s, "alpha"); n.BeatMissedAt != nil {
		t.Fatalf("a new node has a missed heartbeat at %v", n.BeatMissedAt)
	}
	before := dbNow(t, s)
	beat := func(missed bool) {
		t.Helper()
		if err := s.NodeSetBeatMissed(t.Context(), "alpha", missed); err != nil {
			t.Fatalf("NodeSetBeatMissed(alpha, %v): %v", missed, err)
		}
	}
	beat(true)
	first := getNode(t, s, "alpha")
	if first.BeatMissedAt == nil || first.BeatMissedAt.Before(before.Add(-time.Second)) || first.BeatMissedAt.After(dbNow(t, s)) {
		t.Fatalf("missed at %v; want the database's now, about %v", first.BeatMissedAt, before)
	}
	wantState(t, "after a missed heartbeat", first, engine.NodeMaintenance, true)
	if b := getNode(t, s, "bravo"); b.BeatMissedAt != nil {
		t.Errorf("bravo missed a heartbeat at %v; only alpha did", b.BeatMissedAt)
	}
	waitDBClockPast(t, s, first.BeatMissedAt.Add(10*time.Millisecond))
	beat(true)
	if again := getNode(t, s, "alpha"); again.BeatMissedAt == nil || !again.BeatMissedAt.Equal(*first.BeatMissedAt) {
		t.Errorf("a second miss moved the time to %v; want the first, %v", again.BeatMissedAt, first.BeatMissedAt)
	}
	listed, err := s.NodeList(t.Context())
	if err != nil || len(listed) != 2 || listed[0].BeatMissedAt == nil || !listed[0].BeatMissedAt.Equal(*first.BeatMissedAt) {
		t.Errorf("NodeList = %+v, %v; want alpha's missed heartbeat listed", listed, err)
	}
	beat(false)
	if n := getNode(t, s, "alpha"); n.BeatMissedAt != nil {
		t.Errorf("an answered heartbeat left the miss at %v", n.BeatMissedAt)
	}
	beat(true)
	setState(t, s, "alpha", engine.NodeOffline)
	if n := getNode(t, s, "alpha"); n.BeatMissedAt != nil || n.State != engine.NodeOffline {
		t.Errorf("marked OFFLINE: %s, missed at %v; want OFFLINE and no watch", n.State, n.BeatMissedAt)
	}
	setState(t, s, "alpha", engine.NodeOnline)
	beat(true)
	if n := reregister(t, s, sampleNode("alpha")); n.BeatMissedAt != nil {
		t.Errorf("a registration left the miss at %v", n.BeatMissedAt)
	}
	if err := s.NodeSetBeatMissed(t.Context(), "nobody", true); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("NodeSetBeatMissed(nobody) = %v, want not found", err)
	}
}

// The store's NodeClaim writes a row only as its guard says: a new row
// only where the name has none, a replacement only while the row names
// the former process and, with SilentFor, has been silent that long.
// Whether a process may have the name is engine.RegisterNode's to judge.
func testNodeClaimGuarded(t *testing.T, s engine.Store) {
	ctx := t.Context()
	first := sampleNode("alpha")
	if _, err := s.NodeClaim(ctx, engine.NodeClaimParams{Node: first}); err != nil {
		t.Fatalf("claiming a free name: %v", err)
	}
	setMaintenance(t, s, "alpha", true)
	next := first
	next.Process.PID++
	_, err := s.NodeClaim(ctx, engine.NodeClaimParams{Node: next})
	wantErrIs(t, "inserting over an existing row", err, engine.ErrConflict)
	other := first.Process
	other.StartTime++
	_, err = s.NodeClaim(ctx, engine.NodeClaimParams{Node: next, Former: &engine.NodeFormer{Process: other}})
	wantErrIs(t, "replacing a row that names another process", err, engine.ErrConflict)
	_, err = s.NodeClaim(ctx, engine.NodeClaimParams{Node: next,
		Former: &engine.NodeFormer{Process: first.Process, SilentFor: time.Hour}})
	wantErrIs(t, "replacing a row seen within SilentFor", err, engine.ErrConflict)
	if got := getNode(t, s, "alpha"); !got.Process.Same(first.Process) {
		t.Fatalf("refused claims changed the row: it names %v, want %v", got.Process, first.Process)
	}
	got, err := s.NodeClaim(ctx, engine.NodeClaimParams{Node: next, Former: &engine.NodeFormer{Process: first.Process}})
	if err != nil {
		t.Fatalf("replacing the row of the former process: %v", err)
	}
	if !got.Process.Same(next.Process) {
		t.Errorf("the replaced row names %v, want %v", got.Process, next.Process)
	}
	wantState(t, "the replaced row", got, engine.NodeMaintenance, true)
	_, err = s.NodeClaim(ctx, engine.NodeClaimParams{Node: sampleNode("beta"), Former: &engine.NodeFormer{Process: first.Process}})
	wantErrIs(t, "replacing the row of an unknown name", err, engine.ErrNotFound)
}

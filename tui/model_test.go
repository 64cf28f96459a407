package tui

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
)

// fixture is a dashboard on a fresh SQLite database with two nodes and a
// job in each tier.
type fixture struct {
	t     *testing.T
	store engine.Store
	m     Model
	clock *engine.VirtualClock // the status line's clock

	running, queued, finished *engine.Job
}

func openStore(t testing.TB) engine.Store {
	t.Helper()
	ctx := context.Background()
	s, err := dbstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func registerNode(t testing.TB, s engine.Store, name string, maxLoad float64) {
	t.Helper()
	n := engine.Node{Name: name, URL: "http://" + name, MaxLoad: maxLoad, MaxJobs: 10, Weight: 100,
		AcceptExceeding: true, Services: []engine.NodeService{{Type: engine.TypeSleep}}}
	if _, err := engine.RegisterNode(context.Background(), s, engine.NodeRegisterParams{Node: n}); err != nil {
		t.Fatal(err)
	}
}

// move drives a job through the state machine as a dispatcher and a node
// would.
func move(t testing.TB, s engine.Store, j *engine.Job, node string, path ...engine.Status) *engine.Job {
	t.Helper()
	for _, to := range path {
		u := engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}
		switch to {
		case engine.StatusRunning:
			u.Node, u.IncrementAttempt, u.MarkStarted = &node, true, true
		case engine.StatusFinished:
			u.MarkFinished = true
		}
		var err error
		if j, err = s.JobUpdate(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

func insert(t testing.TB, s engine.Store) *engine.Job {
	t.Helper()
	j, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, Status: engine.StatusQueued, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func setup(t *testing.T) *fixture {
	t.Helper()
	s := openStore(t)
	registerNode(t, s, "alpha", 4)
	registerNode(t, s, "beta", 2)
	f := &fixture{t: t, store: s}
	f.finished = move(t, s, insert(t, s), "beta", engine.StatusRunning, engine.StatusFinished)
	f.queued = insert(t, s)
	f.running = move(t, s, insert(t, s), "alpha", engine.StatusRunning)
	// Counting at every refresh, so each test sees its own changes at once.
	src := &Source{Store: s, Clock: engine.SystemClock{}, Database: "sqlite:test.db", CountsEvery: time.Nanosecond}
	f.clock = engine.NewVirtualClock(time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC))
	f.m = New(Options{Fetch: src.Fetch, Inspect: src.Inspect, Actions: EngineActions{Store: s, Who: "alice@host1"},
		Interval: time.Hour, Styles: NewStyles(false), Clock: f.clock})
	f.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	f.run(f.m.Init())
	return f
}

// send feeds one message to the model and returns its command.
func (f *fixture) send(msg tea.Msg) tea.Cmd {
	f.t.Helper()
	next, cmd := f.m.Update(msg)
	f.m = next.(Model)
	return cmd
}

// press sends one key.
func (f *fixture) press(k string) tea.Cmd {
	f.t.Helper()
	return f.send(keyPress(k))
}

func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// run carries out a command the way the program would, feeding its
// message back, until the dashboard has its next snapshot; the tick that
// follows a snapshot is not run. It returns the messages seen.
func (f *fixture) run(cmd tea.Cmd) []tea.Msg {
	f.t.Helper()
	var seen []tea.Msg
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		cmd, queue = queue[0], queue[1:]
		if cmd == nil {
			continue
		}
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, batch...)
			continue
		}
		seen = append(seen, msg)
		next := f.send(msg)
		if _, ok := msg.(snapshotMsg); ok {
			// The tick that follows a snapshot is not run; a read of the
			// open job begun with the refresh is.
			continue
		}
		queue = append(queue, next)
	}
	return seen
}

func (f *fixture) screen() string { return f.m.render() }

func (f *fixture) job(id int64) *engine.Job {
	f.t.Helper()
	j, err := f.store.JobGet(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

func (f *fixture) node(name string) *engine.Node {
	f.t.Helper()
	n, err := f.store.NodeGet(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// selectJob focuses the jobs pane and moves its cursor to the job.
func (f *fixture) selectJob(id int64) {
	f.t.Helper()
	if f.m.focus != paneJobs {
		f.press("tab")
	}
	for range len(f.m.jobs.jobs) {
		f.press("up")
	}
	for range len(f.m.jobs.jobs) {
		if j := f.m.jobs.Selected(); j != nil && j.ID == id {
			return
		}
		f.press("down")
	}
	f.t.Fatalf("job %d is not in the jobs pane:\n%s", id, f.screen())
}

func TestFirstSnapshotFillsTheScreen(t *testing.T) {
	f := setup(t)
	s := f.screen()
	for _, want := range []string{"sqlite:test.db", "lease none", "QUEUED 1", "RUNNING 1", "FINISHED 1",
		"Nodes (2)", "alpha", "beta", "Jobs on all nodes · 3"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	// Jobs on a node first, then waiting, then ended.
	ids := []int64{}
	for _, j := range f.m.jobs.jobs {
		ids = append(ids, j.ID)
	}
	if want := []int64{f.running.ID, f.queued.ID, f.finished.ID}; !equalIDs(ids, want) {
		t.Errorf("jobs pane order = %v, want %v", ids, want)
	}
	lines := strings.Split(s, "\n")
	if len(lines) != 24 {
		t.Errorf("screen has %d lines, want 24", len(lines))
	}
	for i, l := range lines {
		if w := len([]rune(l)); w != 80 {
			t.Errorf("line %d is %d cells wide, want 80: %q", i, w, l)
		}
	}
	if strings.Contains(s, "\x1b") {
		t.Errorf("plain styles drew escape sequences:\n%q", s)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestColouredScreenKeepsItsSize(t *testing.T) {
	f := setup(t)
	f.m = New(Options{Fetch: f.m.fetch, Actions: f.m.actions, Interval: time.Hour, Styles: NewStyles(true)})
	f.run(f.m.Init())
	for _, k := range []string{"", "tab", "?"} {
		if k != "" {
			f.press(k)
		}
		s := f.screen()
		if !strings.Contains(s, "\x1b[") {
			t.Errorf("after %q: coloured styles drew no colour", k)
		}
		for i, l := range strings.Split(s, "\n") {
			if w := ansi.StringWidth(l); w != 80 {
				t.Errorf("after %q: line %d is %d cells wide: %q", k, i, w, l)
			}
		}
	}
}

func TestTickRefreshesAndStaleTicksAreDropped(t *testing.T) {
	f := setup(t)
	insert(t, f.store)
	seq := f.m.tickSeq
	if cmd := f.send(tickMsg{seq: seq - 1}); cmd != nil {
		t.Fatal("a stale tick started a refresh")
	}
	f.run(f.send(tickMsg{seq: seq}))
	if !strings.Contains(f.screen(), "QUEUED 2") {
		t.Errorf("the tick's refresh did not show the new job:\n%s", f.screen())
	}
	// The tick command waits the interval and then asks again.
	f.m.interval = time.Millisecond
	if msg := f.m.tickCmd()(); msg != (tickMsg{seq: f.m.tickSeq}) {
		t.Errorf("tick command sent %#v", msg)
	}
}

func TestRefreshErrorIsShownAndClearedWhenTheDatabaseAnswers(t *testing.T) {
	f := setup(t)
	f.send(snapshotMsg{err: context.DeadlineExceeded})
	if !strings.Contains(f.screen(), "error: refresh: context deadline exceeded") {
		t.Fatalf("refresh error not shown:\n%s", f.screen())
	}
	f.run(f.send(tickMsg{seq: f.m.tickSeq}))
	if strings.Contains(f.screen(), "error:") {
		t.Errorf("error still shown after a good refresh:\n%s", f.screen())
	}
}

func TestMoveKeys(t *testing.T) {
	f := setup(t)
	for _, k := range []string{"down", "j"} {
		f.press("up")
		f.press(k)
		if n := f.m.nodes.Selected(); n == nil || n.Name != "beta" {
			t.Errorf("%s in the nodes pane selected %v, want beta", k, n)
		}
	}
	f.press("down") // stays on the last
	if n := f.m.nodes.Selected(); n.Name != "beta" {
		t.Errorf("down past the end selected %s", n.Name)
	}
	for _, k := range []string{"up", "k"} {
		f.press("down")
		f.press(k)
		if n := f.m.nodes.Selected(); n.Name != "alpha" {
			t.Errorf("%s selected %s, want alpha", k, n.Name)
		}
	}
	// The jobs pane does not move while the nodes pane has the keys.
	if j := f.m.jobs.Selected(); j.ID != f.running.ID {
		t.Errorf("jobs cursor moved with the nodes pane focused: %d", j.ID)
	}
	f.press("tab")
	f.press("j")
	if j := f.m.jobs.Selected(); j.ID != f.queued.ID {
		t.Errorf("j in the jobs pane selected %d, want %d", j.ID, f.queued.ID)
	}
	if n := f.m.nodes.Selected(); n.Name != "alpha" {
		t.Errorf("nodes cursor moved with the jobs pane focused: %s", n.Name)
	}
}

func TestTabSwitchesPane(t *testing.T) {
	f := setup(t)
	if f.m.focus != paneNodes || !strings.Contains(f.screen(), "▸ alpha") {
		t.Fatalf("nodes pane not focused at start:\n%s", f.screen())
	}
	f.press("tab")
	if f.m.focus != paneJobs || !strings.Contains(f.screen(), "› alpha") || !strings.Contains(f.screen(), "▸ "+itoa(f.running.ID)) {
		t.Errorf("tab did not move the focus to the jobs pane:\n%s", f.screen())
	}
	f.press("tab")
	if f.m.focus != paneNodes {
		t.Error("second tab did not move the focus back")
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func TestEnterScopesJobsToTheNodeAndAShowsAll(t *testing.T) {
	f := setup(t)
	f.press("down") // beta
	f.run(f.press("enter"))
	if f.m.query.Node != "beta" || f.m.focus != paneJobs {
		t.Fatalf("enter: query %+v, focus %v", f.m.query, f.m.focus)
	}
	if s := f.screen(); !strings.Contains(s, "Jobs on node beta · 1") || len(f.m.jobs.jobs) != 1 || f.m.jobs.jobs[0].ID != f.finished.ID {
		t.Errorf("beta's jobs not shown:\n%s", s)
	}
	f.run(f.press("a"))
	if f.m.query.Node != "" || len(f.m.jobs.jobs) != 3 {
		t.Errorf("a did not show every node's jobs:\n%s", f.screen())
	}
	if cmd := f.press("a"); cmd != nil {
		t.Error("a with every node shown already refreshed")
	}
}

func TestFilterKey(t *testing.T) {
	f := setup(t)
	f.press("/")
	if f.m.state != stateFilter {
		t.Fatalf("/ did not open the filter")
	}
	for _, r := range "running" {
		f.press(string(r))
	}
	if !strings.Contains(f.screen(), "/running") {
		t.Errorf("typed filter not shown:\n%s", f.screen())
	}
	if c := f.m.View().Cursor; c == nil || c.X != len("/running") || c.Y != 22 {
		t.Errorf("cursor while typing the filter: %+v, want at 8,22", c)
	}
	f.run(f.press("enter"))
	if f.m.state != stateBrowse || len(f.m.query.Statuses) != 1 || f.m.query.Statuses[0] != engine.StatusRunning {
		t.Fatalf("enter: state %v, query %+v", f.m.state, f.m.query)
	}
	if s := f.screen(); !strings.Contains(s, "filter: running · 1") || len(f.m.jobs.jobs) != 1 {
		t.Errorf("filtered pane wrong:\n%s", s)
	}
	// esc leaves the filter in force.
	f.press("/")
	f.press("x")
	if cmd := f.press("esc"); cmd != nil || f.m.state != stateBrowse || f.m.filter.Value() != "running" {
		t.Errorf("esc: state %v, filter %q", f.m.state, f.m.filter.Value())
	}
	// A type filter, then an empty one shows every job again.
	f.press("/")
	for range len("running") {
		f.press("backspace")
	}
	for _, r := range "noop" {
		f.press(string(r))
	}
	f.run(f.press("enter"))
	if len(f.m.jobs.jobs) != 0 || !strings.Contains(f.screen(), "no jobs") {
		t.Errorf("type filter noop still lists jobs:\n%s", f.screen())
	}
	f.press("/")
	for range len("noop") {
		f.press("backspace")
	}
	f.run(f.press("enter"))
	if len(f.m.jobs.jobs) != 3 {
		t.Errorf("empty filter lists %d jobs, want 3", len(f.m.jobs.jobs))
	}
}

func TestCancelAsksFirst(t *testing.T) {
	f := setup(t)
	f.selectJob(f.queued.ID)
	if cmd := f.press("c"); cmd != nil || f.m.state != stateConfirm {
		t.Fatalf("c did not ask: state %v", f.m.state)
	}
	if s := f.screen(); !strings.Contains(s, "Cancel job "+itoa(f.queued.ID)+" (sleep, QUEUED)?  enter: go ahead · esc: leave it") ||
		!strings.Contains(s, "reason (optional): ") {
		t.Errorf("prompt not shown:\n%s", s)
	}
	if cmd := f.press("esc"); cmd != nil || f.m.state != stateBrowse {
		t.Fatalf("esc: state %v", f.m.state)
	}
	if j := f.job(f.queued.ID); j.Status != engine.StatusQueued {
		t.Fatalf("esc cancelled the job: %s", j.Status)
	}
	if !strings.Contains(f.screen(), "left as it was") {
		t.Errorf("esc did not say so:\n%s", f.screen())
	}
	f.press("c")
	for _, r := range "yes, not needed" { // typed, not answers
		f.press(string(r))
	}
	if f.m.state != stateConfirm {
		t.Fatal("typing a reason closed the dialog")
	}
	f.run(f.press("enter"))
	if j := f.job(f.queued.ID); j.Status != engine.StatusCancelled {
		t.Fatalf("enter: job is %s", j.Status)
	}
	events, err := f.store.EventList(context.Background(), engine.EventListParams{JobID: &f.queued.ID})
	if err != nil || len(events) != 1 || events[0].Who != "alice@host1" || events[0].Reason != "yes, not needed" || events[0].Verb != "cancel" {
		t.Errorf("the cancel's events: %+v, %v; want one naming alice@host1 and the reason typed", events, err)
	}
	if s := f.screen(); !strings.Contains(s, "job "+itoa(f.queued.ID)+" cancelled: now CANCELLED") || !strings.Contains(s, "CANCELLED 1") {
		t.Errorf("result not shown:\n%s", s)
	}
}

func TestPauseAndResume(t *testing.T) {
	f := setup(t)
	f.selectJob(f.queued.ID)
	f.run(f.press("p"))
	if j := f.job(f.queued.ID); j.Status != engine.StatusPaused {
		t.Fatalf("p: job is %s", j.Status)
	}
	f.selectJob(f.queued.ID)
	f.run(f.press("p"))
	if j := f.job(f.queued.ID); j.Status != engine.StatusQueued {
		t.Fatalf("p on a paused job: %s", j.Status)
	}
	if !strings.Contains(f.screen(), "resumed: now QUEUED") {
		t.Errorf("result not shown:\n%s", f.screen())
	}
}

func TestRequeueAsksFirst(t *testing.T) {
	f := setup(t)
	f.selectJob(f.finished.ID)
	f.press("r")
	if f.m.state != stateConfirm || !strings.Contains(f.screen(), "Requeue job") {
		t.Fatalf("r did not ask:\n%s", f.screen())
	}
	f.run(f.press("enter"))
	if j := f.job(f.finished.ID); j.Status != engine.StatusRestart {
		t.Fatalf("enter: job is %s", j.Status)
	}
	// A refused verb shows the engine's reason.
	f.selectJob(f.running.ID)
	f.press("r")
	f.run(f.press("enter"))
	if !strings.Contains(f.screen(), "error: ") || !strings.Contains(f.screen(), "only ended jobs") {
		t.Errorf("refusal not shown:\n%s", f.screen())
	}
}

func TestMaintenanceOnAndOff(t *testing.T) {
	f := setup(t)
	f.press("m")
	if f.m.state != stateConfirm || !strings.Contains(f.screen(), "Put node alpha in maintenance") {
		t.Fatalf("m did not ask:\n%s", f.screen())
	}
	for _, r := range "disk swap" {
		f.press(string(r))
	}
	f.run(f.press("enter"))
	if !f.node("alpha").Maintenance || !strings.Contains(f.screen(), "MAINTENANCE") {
		t.Fatalf("maintenance not on:\n%s", f.screen())
	}
	f.press("m")
	if !strings.Contains(f.screen(), "Take node alpha out of maintenance") {
		t.Fatalf("m on a node in maintenance:\n%s", f.screen())
	}
	f.run(f.press("enter"))
	if f.node("alpha").Maintenance {
		t.Fatal("maintenance still on")
	}
	events, err := f.store.EventList(context.Background(), engine.EventListParams{Node: "alpha"})
	if err != nil || len(events) != 2 || events[0].Detail != "maintenance on" || events[0].Reason != "disk swap" ||
		events[1].Detail != "maintenance off" || events[1].Reason != "" || events[1].Who != "alice@host1" {
		t.Errorf("events of node alpha: %+v, %v", events, err)
	}
}

func TestDrainAsksFirst(t *testing.T) {
	f := setup(t)
	f.press("d")
	if f.m.state != stateConfirm || !strings.Contains(f.screen(), "Drain node alpha") {
		t.Fatalf("d did not ask:\n%s", f.screen())
	}
	f.press("esc")
	if f.node("alpha").Maintenance {
		t.Fatal("esc drained the node")
	}
	f.press("d")
	f.run(f.press("enter"))
	if !f.node("alpha").Maintenance || !strings.Contains(f.screen(), "node alpha is draining: 1 job still active") {
		t.Errorf("drain:\n%s", f.screen())
	}
	f.press("down") // beta runs nothing
	f.press("d")
	f.run(f.press("enter"))
	if !strings.Contains(f.screen(), "node beta is drained") {
		t.Errorf("drain of an idle node:\n%s", f.screen())
	}
}

func TestExplainKey(t *testing.T) {
	f := setup(t)
	f.selectJob(f.queued.ID)
	msgs := f.run(f.press("e"))
	if len(msgs) != 1 || f.m.state != stateExplain {
		t.Fatalf("e: state %v after %v", f.m.state, msgs)
	}
	s := f.screen()
	for _, want := range []string{"Explain job " + itoa(f.queued.ID), "dispatchable: yes", "alpha", "beta", "esc to close"} {
		if !strings.Contains(s, want) {
			t.Errorf("explanation lacks %q:\n%s", want, s)
		}
	}
	f.press("esc")
	if f.m.state != stateBrowse {
		t.Errorf("esc did not close the explanation")
	}
}

func TestKeysWithoutASelectionSayWhy(t *testing.T) {
	f := setup(t)
	f.press("/")
	for _, r := range "noop" {
		f.press(string(r))
	}
	f.run(f.press("enter"))
	for _, k := range []string{"c", "p", "r", "e"} {
		if cmd := f.press(k); cmd != nil || f.m.state != stateBrowse {
			t.Errorf("%s without a job: state %v", k, f.m.state)
		}
		if !strings.Contains(f.screen(), "error: no job selected") {
			t.Errorf("%s without a job:\n%s", k, f.screen())
		}
	}
}

func TestHelpKey(t *testing.T) {
	f := setup(t)
	f.press("?")
	if f.m.state != stateHelp || !strings.Contains(f.screen(), "maintenance on/off") || !strings.Contains(f.screen(), "WATCH") {
		t.Fatalf("? did not show help:\n%s", f.screen())
	}
	f.press("?")
	if f.m.state != stateBrowse {
		t.Error("? did not close help")
	}
	f.press("?")
	f.press("esc")
	if f.m.state != stateBrowse {
		t.Error("esc did not close help")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		f := setup(t)
		cmd := f.press(k)
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s did not quit", k)
		}
	}
}

func TestResize(t *testing.T) {
	f := setup(t)
	for _, size := range [][2]int{{100, 30}, {80, 24}, {120, 50}} {
		f.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(f.screen(), "\n")
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := len([]rune(l)); w != size[0] {
				t.Errorf("%dx%d: line %d is %d wide", size[0], size[1], i, w)
			}
		}
	}
	f.send(tea.WindowSizeMsg{Width: 30, Height: 5})
	if !strings.Contains(f.screen(), "terminal 30x5: top needs 40x10") {
		t.Errorf("tiny terminal:\n%s", f.screen())
	}
}

// The STATE column says what 'jobctl nodes' says: the label of
// engine.StatusOf on the database's clock.
func TestNodeStates(t *testing.T) {
	now := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	cases := []struct {
		n    engine.Node
		want string
	}{
		{engine.Node{State: engine.NodeOnline, LastSeen: now}, "ONLINE"},
		{engine.Node{State: engine.NodeMaintenance, Maintenance: true, LastSeen: now}, "ONLINE,MAINTENANCE"},
		{engine.Node{State: engine.NodeOnline, LastSeen: now, LoadAvg: 9, MaxLoadAvg: 4}, "ONLINE,OVERLOADED"},
		{engine.Node{State: engine.NodeOnline, LastSeen: now.Add(-engine.DefaultNodeLease/2 - time.Second)}, "WATCH"},
		{engine.Node{State: engine.NodeOnline, LastSeen: now.Add(-engine.DefaultNodeLease - time.Second)}, "LOST"},
		{engine.Node{State: engine.NodeOffline, LastSeen: now.Add(-time.Hour)}, "OFFLINE"},
	}
	for _, c := range cases {
		if got := nodeStatus(&c.n, now).Label(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.n, got, c.want)
		}
	}
}

func TestDispatchRate(t *testing.T) {
	at := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	prev := &Snapshot{CountsAt: at, Counts: map[engine.Status]int{engine.StatusQueued: 10, engine.StatusRunning: 2}}
	cur := &Snapshot{CountsAt: at.Add(2 * time.Second), Counts: map[engine.Status]int{engine.StatusQueued: 4, engine.StatusRunning: 4, engine.StatusFinished: 4}}
	if r, ok := DispatchRate(prev, cur); !ok || r != 3 {
		t.Errorf("rate = %v, %v; want 3", r, ok)
	}
	if _, ok := DispatchRate(nil, cur); ok {
		t.Error("a rate without an earlier snapshot")
	}
	if _, ok := DispatchRate(cur, cur); ok {
		t.Error("a rate between the same counts")
	}
}

func TestSourceCountsAtMostEveryCountsEvery(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	insert(t, s)
	clock := engine.NewVirtualClock(time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC))
	src := &Source{Store: s, Clock: clock, CountsEvery: 5 * time.Second}
	queued := func(q Query) int {
		t.Helper()
		snap, err := src.Fetch(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Counts[engine.StatusQueued]
	}
	if n := queued(Query{}); n != 1 {
		t.Fatalf("first count: %d queued", n)
	}
	insert(t, s)
	clock.Advance(4 * time.Second)
	if n := queued(Query{}); n != 1 {
		t.Errorf("recounted after 4s: %d queued", n)
	}
	clock.Advance(time.Second)
	if n := queued(Query{}); n != 2 {
		t.Errorf("not recounted after 5s: %d queued", n)
	}
	insert(t, s)
	if n := queued(Query{Recount: true}); n != 3 {
		t.Errorf("Recount did not count: %d queued", n)
	}
}

func TestSourcePageIsBounded(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	registerNode(t, s, "alpha", 100)
	var ps []engine.JobInsertParams
	for range 30 {
		ps = append(ps, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, Status: engine.StatusQueued, MaxAttempts: 1})
	}
	ids, err := s.JobInsertMany(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:12] {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		move(t, s, j, "alpha", engine.StatusRunning)
	}
	src := &Source{Store: s, Clock: engine.SystemClock{}, PageSize: 10}
	snap, err := src.Fetch(ctx, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 10 || snap.Matching != 30 {
		t.Fatalf("page of %d of %d, want 10 of 30", len(snap.Jobs), snap.Matching)
	}
	for _, j := range snap.Jobs {
		if j.Status != engine.StatusRunning {
			t.Errorf("job %d %s on a page that running jobs fill", j.ID, j.Status)
		}
	}
	snap, err = src.Fetch(ctx, Query{Node: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 10 || snap.Matching != -1 {
		t.Errorf("node page of %d, matching %d", len(snap.Jobs), snap.Matching)
	}
}

func TestParseFilter(t *testing.T) {
	st, types := ParseFilter("Running,failed encode running")
	if len(st) != 2 || st[0] != engine.StatusRunning || st[1] != engine.StatusFailed || len(types) != 1 || types[0] != "encode" {
		t.Errorf("ParseFilter = %v, %v", st, types)
	}
}

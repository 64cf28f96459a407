package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var eventTests = []subtest{
	{"EventAppendList", testEventAppendList},
	{"EventListFilters", testEventListFilters},
	{"EventAppendInvalid", testEventAppendInvalid},
	{"EventAppendUnknownJob", testEventAppendUnknownJob},
	{"EventInTxWithItsChange", testEventInTx},
	{"EventPurgedWithItsJob", testEventPurgedWithJob},
	{"EventPurgeByAge", testEventPurgeByAge},
	{"TxUndoesRecordedChanges", testTxUndoesRecordedChanges},
	{"TxKeepsRecordedChanges", testTxKeepsRecordedChanges},
}

func appendEvent(t *testing.T, s engine.TxStore, p engine.EventAppendParams) {
	t.Helper()
	if p.Who == "" {
		p.Who = "alice@host1"
	}
	if err := s.EventAppend(t.Context(), p); err != nil {
		t.Fatalf("EventAppend(%+v): %v", p, err)
	}
}

func listEvents(t *testing.T, s engine.TxStore, p engine.EventListParams) []engine.Event {
	t.Helper()
	events, err := s.EventList(t.Context(), p)
	if err != nil {
		t.Fatalf("EventList(%+v): %v", p, err)
	}
	return events
}

// eventKey is what a test says of an event: its verb and what it names.
func eventKey(e engine.Event) string {
	job := "-"
	if e.JobID != nil {
		job = fmt.Sprint(*e.JobID)
	}
	return fmt.Sprintf("%s job=%s node=%s type=%s schedule=%s", e.Verb, job, e.Node, e.Type, e.Schedule)
}

func wantEvents(t *testing.T, what string, got []engine.Event, want ...string) {
	t.Helper()
	keys := make([]string, len(got))
	for i, e := range got {
		keys[i] = eventKey(e)
	}
	if len(want) == 0 {
		want = []string{}
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, keys, want)
	}
}

func testEventAppendList(t *testing.T, s engine.Store) {
	from := dbNow(t, s)
	a := insert(t, s, engine.JobInsertParams{Type: "encode"})
	b := insert(t, s, engine.JobInsertParams{Type: "noop"})
	appendEvent(t, s, engine.EventAppendParams{Who: "bob@host2", Verb: "nodes maintenance", Node: "alpha", Detail: "on",
		Reason: "disk swap — ünïcode"})
	appendEvent(t, s, engine.EventAppendParams{Verb: "cancel", JobIDs: []int64{b.ID, a.ID, b.ID},
		Detail: "QUEUED → CANCELLED", Reason: "wrong input"})
	to := dbNow(t, s)

	events := listEvents(t, s, engine.EventListParams{})
	wantEvents(t, "every event, oldest first; one per job, in job order, each with its job's type", events,
		"nodes maintenance job=- node=alpha type= schedule=",
		fmt.Sprintf("cancel job=%d node= type=encode schedule=", a.ID),
		fmt.Sprintf("cancel job=%d node= type=noop schedule=", b.ID))
	if len(events) != 3 {
		t.FailNow()
	}
	first := events[0]
	if first.Who != "bob@host2" || first.Detail != "on" || first.Reason != "disk swap — ünïcode" {
		t.Errorf("first event = %+v; want who, detail and reason as appended", first)
	}
	for i, e := range events {
		wantUTC(t, fmt.Sprintf("event %d's time", i), e.At)
		if !within(e.At, from.Truncate(time.Second), to.Add(time.Second)) {
			t.Errorf("event %d at %s, not within the database clock's %s to %s", i, e.At, from, to)
		}
		if i > 0 && e.ID <= events[i-1].ID {
			t.Errorf("event ids %d then %d: not ascending", events[i-1].ID, e.ID)
		}
		if i > 0 && e.At.Before(events[i-1].At) {
			t.Errorf("event %d at %s before the one recorded earlier at %s", i, e.At, events[i-1].At)
		}
	}
	if e := events[2]; e.Who != "alice@host1" || e.Detail != "QUEUED → CANCELLED" || e.Reason != "wrong input" {
		t.Errorf("a job's event = %+v; want who, detail and reason as appended", e)
	}
}

func testEventListFilters(t *testing.T, s engine.Store) {
	a := queued(t, s, 1)
	b := queued(t, s, 1)
	appendEvent(t, s, engine.EventAppendParams{Verb: "submit", JobIDs: []int64{a.ID}})
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes drain", Node: "alpha"})
	appendEvent(t, s, engine.EventAppendParams{Verb: "submit", JobIDs: []int64{b.ID}})
	appendEvent(t, s, engine.EventAppendParams{Verb: "limits set", Type: "encode", Detail: "max running 2"})
	appendEvent(t, s, engine.EventAppendParams{Verb: "cancel", JobIDs: []int64{a.ID}})
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes maintenance", Node: "beta"})
	all := listEvents(t, s, engine.EventListParams{})
	if len(all) != 6 {
		t.Fatalf("%d events, want 6", len(all))
	}
	aKey := func(verb string) string { return fmt.Sprintf("%s job=%d node= type=noop schedule=", verb, a.ID) }

	wantEvents(t, "the events of job a", listEvents(t, s, engine.EventListParams{JobID: &a.ID}), aKey("submit"), aKey("cancel"))
	wantEvents(t, "the newest event of job a", listEvents(t, s, engine.EventListParams{JobID: &a.ID, Limit: 1}), aKey("cancel"))
	wantEvents(t, "a job without events", listEvents(t, s, engine.EventListParams{JobID: engine.Ptr(b.ID + 100)}))
	wantEvents(t, "the events of node alpha", listEvents(t, s, engine.EventListParams{Node: "alpha"}),
		"nodes drain job=- node=alpha type= schedule=")
	wantEvents(t, "the newest two", listEvents(t, s, engine.EventListParams{Limit: 2}), aKey("cancel"),
		"nodes maintenance job=- node=beta type= schedule=")
	wantEvents(t, "after the fourth", listEvents(t, s, engine.EventListParams{AfterID: all[3].ID}), aKey("cancel"),
		"nodes maintenance job=- node=beta type= schedule=")
	wantEvents(t, "after the last", listEvents(t, s, engine.EventListParams{AfterID: all[5].ID}))

	since := all[0].At
	if got := listEvents(t, s, engine.EventListParams{Since: &since}); len(got) != 6 {
		t.Errorf("since the first event's own time: %d events, want all 6 (the bound is inclusive)", len(got))
	}
	later := all[5].At.Add(time.Millisecond)
	wantEvents(t, "since after the last", listEvents(t, s, engine.EventListParams{Since: &later}))
	// A time between two events' splits them, whatever the precision.
	waitDBClockPast(t, s, all[5].At)
	mid := dbNow(t, s)
	waitDBClockPast(t, s, mid.Add(2*time.Millisecond))
	appendEvent(t, s, engine.EventAppendParams{Verb: "lease release"})
	wantEvents(t, "since a time between the sixth and the seventh", listEvents(t, s, engine.EventListParams{Since: &mid}),
		"lease release job=- node= type= schedule=")
}

func testEventAppendInvalid(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	for what, p := range map[string]engine.EventAppendParams{
		"no who":                  {Verb: "cancel"},
		"no verb":                 {Who: "a@b"},
		"a reason with a newline": {Who: "a@b", Verb: "cancel", Reason: "one\ntwo"},
		"a reason too long":       {Who: "a@b", Verb: "cancel", Reason: strings.Repeat("x", engine.MaxEventReason+1)},
		"invalid UTF-8":           {Who: "a@b", Verb: "cancel", Detail: "\xff"},
		"a node name too long":    {Who: "a@b", Verb: "nodes rm", Node: strings.Repeat("n", engine.MaxNameLength+1)},
		"a job id of 0":           {Who: "a@b", Verb: "cancel", JobIDs: []int64{j.ID, 0}},
	} {
		err := s.EventAppend(t.Context(), p)
		wantErrIs(t, what, err, engine.ErrInvalid)
	}
	// The longest texts fit every backend.
	long := engine.EventAppendParams{Who: strings.Repeat("ü", engine.MaxNameLength), Verb: "cancel", JobIDs: []int64{j.ID},
		Detail: strings.Repeat("→", engine.MaxEventDetail), Reason: strings.Repeat("ß", engine.MaxEventReason)}
	appendEvent(t, s, long)
	got := listEvents(t, s, engine.EventListParams{})
	if len(got) != 1 || got[0].Who != long.Who || got[0].Detail != long.Detail || got[0].Reason != long.Reason {
		t.Errorf("after the refused appends and one at the limits: %d events (%v); want the one, whole", len(got), got)
	}
}

func testEventAppendUnknownJob(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	err := s.EventAppend(t.Context(), engine.EventAppendParams{Who: "a@b", Verb: "cancel", JobIDs: []int64{j.ID, j.ID + 1000}})
	wantErrIs(t, "an event of a job that does not exist", err, engine.ErrNotFound)
	var nf *engine.NotFoundError
	if !errors.As(err, &nf) || nf.ID != fmt.Sprint(j.ID+1000) {
		t.Errorf("error %v; want a *NotFoundError naming job %d", err, j.ID+1000)
	}
	wantEvents(t, "after refusing it", listEvents(t, s, engine.EventListParams{}))
}

// An event appended in the transaction of its change is kept with the
// change and undone with it.
func testEventInTx(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	boom := errors.New("boom")
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		cancelled := admin(t, tx, j, engine.VerbCancel)
		appendEvent(t, tx, engine.EventAppendParams{Verb: "cancel", JobIDs: []int64{cancelled.ID}})
		// The transaction reads its own event.
		wantEvents(t, "inside the transaction", listEvents(t, tx, engine.EventListParams{JobID: &j.ID}),
			fmt.Sprintf("cancel job=%d node= type=noop schedule=", j.ID))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx = %v, want fn's error", err)
	}
	wantEvents(t, "after a rolled-back change", listEvents(t, s, engine.EventListParams{}))
	if got := get(t, s, j.ID); got.Status != engine.StatusQueued {
		t.Errorf("job after the rollback is %s, want QUEUED", got.Status)
	}

	if err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		cancelled := admin(t, tx, j, engine.VerbCancel)
		return tx.EventAppend(t.Context(), engine.EventAppendParams{Who: "a@b", Verb: "cancel", JobIDs: []int64{cancelled.ID}})
	}); err != nil {
		t.Fatalf("Tx: %v", err)
	}
	wantEvents(t, "after the committed change", listEvents(t, s, engine.EventListParams{}),
		fmt.Sprintf("cancel job=%d node= type=noop schedule=", j.ID))

	// A refused event undoes its change.
	k := queued(t, s, 1)
	err = s.Tx(t.Context(), func(tx engine.TxStore) error {
		admin(t, tx, k, engine.VerbCancel)
		return tx.EventAppend(t.Context(), engine.EventAppendParams{Who: "a@b", Verb: "cancel", JobIDs: []int64{k.ID}, Reason: "bad\x1b[31m"})
	})
	wantErrIs(t, "Tx with a refused event", err, engine.ErrInvalid)
	if got := get(t, s, k.ID); got.Status != engine.StatusQueued {
		t.Errorf("job of a refused event is %s, want QUEUED: the change went without its event", got.Status)
	}
}

func testEventPurgedWithJob(t *testing.T, s engine.Store) {
	gone := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	kept := finished(t, s, engine.JobInsertParams{}, engine.RunFailed)
	appendEvent(t, s, engine.EventAppendParams{Verb: "submit", JobIDs: []int64{gone.ID, kept.ID}})
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes maintenance", Node: "alpha"})
	if n := purge(t, s, engine.JobPurgeParams{Statuses: []engine.Status{engine.StatusFinished}}); n != 1 {
		t.Fatalf("purged %d jobs, want 1", n)
	}
	wantEvents(t, "after purging one job", listEvents(t, s, engine.EventListParams{}),
		fmt.Sprintf("submit job=%d node= type=noop schedule=", kept.ID),
		"nodes maintenance job=- node=alpha type= schedule=")
	if n := purge(t, s, engine.JobPurgeParams{DryRun: true}); n != 1 {
		t.Fatalf("a dry run would purge %d jobs, want 1", n)
	}
	if got := listEvents(t, s, engine.EventListParams{}); len(got) != 2 {
		t.Errorf("a dry run removed events: %d left, want 2", len(got))
	}
	// A purge in batches, from the index of ended jobs, takes them too.
	if n := purge(t, s, engine.JobPurgeParams{Limit: 1}); n != 1 {
		t.Fatalf("a batch of one purged %d jobs, want 1", n)
	}
	wantEvents(t, "after a batch of one", listEvents(t, s, engine.EventListParams{}),
		"nodes maintenance job=- node=alpha type= schedule=")
}

func testEventPurgeByAge(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes maintenance", Node: "old1"})
	appendEvent(t, s, engine.EventAppendParams{Verb: "cancel", JobIDs: []int64{j.ID}})
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes maintenance", Node: "old2"})
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes maintenance", Node: "old3"})
	old := listEvents(t, s, engine.EventListParams{})
	waitDBClockPast(t, s, old[len(old)-1].At.Add(2*time.Millisecond))
	cutoff := dbNow(t, s)
	waitDBClockPast(t, s, cutoff.Add(2*time.Millisecond))
	appendEvent(t, s, engine.EventAppendParams{Verb: "nodes maintenance", Node: "new"})

	n, err := s.EventPurge(t.Context(), engine.EventPurgeParams{Before: cutoff, DryRun: true})
	if err != nil || n != 3 {
		t.Fatalf("EventPurge dry run = %d, %v; want 3", n, err)
	}
	if got := listEvents(t, s, engine.EventListParams{}); len(got) != 5 {
		t.Fatalf("a dry run removed events: %d left, want 5", len(got))
	}
	if n, err := s.EventPurge(t.Context(), engine.EventPurgeParams{Before: cutoff, Limit: 2}); err != nil || n != 2 {
		t.Fatalf("EventPurge with limit 2 = %d, %v", n, err)
	}
	jobKey := fmt.Sprintf("cancel job=%d node= type=noop schedule=", j.ID)
	wantEvents(t, "after purging the oldest two", listEvents(t, s, engine.EventListParams{}),
		jobKey, "nodes maintenance job=- node=old3 type= schedule=", "nodes maintenance job=- node=new type= schedule=")
	if n, err := s.EventPurge(t.Context(), engine.EventPurgeParams{Before: cutoff}); err != nil || n != 1 {
		t.Fatalf("EventPurge = %d, %v; want the one left before the cutoff", n, err)
	}
	wantEvents(t, "after the purge", listEvents(t, s, engine.EventListParams{}),
		jobKey, "nodes maintenance job=- node=new type= schedule=")
	_, err = s.EventPurge(t.Context(), engine.EventPurgeParams{Before: cutoff, Limit: -1})
	wantErrIs(t, "a negative limit", err, engine.ErrInvalid)
}

// recordedChanges makes, in tx, every change the commands record beside
// their events, other than job transitions: the state a test compares.
type recordedState struct {
	Jobs        int
	Maintenance bool
	Nodes       []string
	Limits      []engine.TypeLimit
	LeaseOwner  string
	Events      int
}

func readRecordedState(t *testing.T, s engine.Store) recordedState {
	t.Helper()
	var st recordedState
	st.Jobs = len(listAll(t, s))
	st.Maintenance = getNode(t, s, "alpha").Maintenance
	nodes, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		st.Nodes = append(st.Nodes, n.Name)
	}
	if st.Limits, err = s.TypeLimitList(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range st.Limits {
		st.Limits[i].UpdatedAt = time.Time{}
	}
	st.LeaseOwner = lease(t, s).Owner
	st.Events = len(listEvents(t, s, engine.EventListParams{}))
	return st
}

// recordedSetup is a store with a node, a gone node, a type limit and a
// lease holder, for the changes to make.
func recordedSetup(t *testing.T, s engine.Store) {
	t.Helper()
	register(t, s, sampleNode("alpha"))
	register(t, s, sampleNode("gone"))
	setState(t, s, "gone", engine.NodeOffline)
	if err := s.TypeLimitSet(t.Context(), engine.TypeLimitSetParams{Type: "encode", MaxRunning: 2}); err != nil {
		t.Fatal(err)
	}
	if !acquire(t, s, "alpha", time.Minute) {
		t.Fatal("could not take the lease")
	}
}

// makeRecordedChanges makes one of each change in tx, with its event.
func makeRecordedChanges(t *testing.T, tx engine.TxStore) {
	t.Helper()
	ctx := t.Context()
	ids, err := tx.JobInsertMany(ctx, []engine.JobInsertParams{
		{Type: "noop", Status: engine.StatusQueued, MaxAttempts: 1},
		{Type: "encode", Status: engine.StatusQueued, MaxAttempts: 1},
	})
	if err != nil {
		t.Fatalf("JobInsertMany: %v", err)
	}
	appendEvent(t, tx, engine.EventAppendParams{Verb: "submit", JobIDs: ids})
	if err := tx.NodeSetMaintenance(ctx, "alpha", true); err != nil {
		t.Fatalf("NodeSetMaintenance: %v", err)
	}
	// The row as recordedSetup registered it, seen no later than in a day.
	gone := engine.NodeRemoveParams{Name: "gone", Process: sampleNode("gone").Process, LastSeen: time.Now().Add(24 * time.Hour)}
	if err := tx.NodeRemove(ctx, gone); err != nil {
		t.Fatalf("NodeRemove: %v", err)
	}
	if err := tx.TypeLimitDelete(ctx, "encode"); err != nil {
		t.Fatalf("TypeLimitDelete: %v", err)
	}
	if err := tx.TypeLimitSet(ctx, engine.TypeLimitSetParams{Type: "render", MaxRunning: 3}); err != nil {
		t.Fatalf("TypeLimitSet: %v", err)
	}
	if ok, err := tx.LeaseRelease(ctx, ""); err != nil || !ok {
		t.Fatalf("LeaseRelease = %v, %v", ok, err)
	}
	appendEvent(t, tx, engine.EventAppendParams{Verb: "nodes maintenance", Node: "alpha", Detail: "on"})
}

// Every change a command records, made in a transaction that fails, is
// undone with its events: none is kept without the other.
func testTxUndoesRecordedChanges(t *testing.T, s engine.Store) {
	recordedSetup(t, s)
	before := readRecordedState(t, s)
	boom := errors.New("boom")
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		makeRecordedChanges(t, tx)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx = %v, want fn's error", err)
	}
	if after := readRecordedState(t, s); !reflect.DeepEqual(after, before) {
		t.Errorf("after a failed transaction:\n got  %+v\n want %+v", after, before)
	}
}

func testTxKeepsRecordedChanges(t *testing.T, s engine.Store) {
	recordedSetup(t, s)
	before := readRecordedState(t, s)
	if err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		makeRecordedChanges(t, tx)
		return nil
	}); err != nil {
		t.Fatalf("Tx: %v", err)
	}
	want := recordedState{Jobs: before.Jobs + 2, Maintenance: true, Nodes: []string{"alpha"},
		Limits: []engine.TypeLimit{{Type: "render", MaxRunning: 3}}, Events: before.Events + 3}
	if after := readRecordedState(t, s); !reflect.DeepEqual(after, want) {
		t.Errorf("after a committed transaction:\n got  %+v\n want %+v", after, want)
	}
}

package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/placement"
)

// leaseSetup is an in-memory store on a clock the test moves, with a node
// "dead" (node lease 2s) running one job, a node "live" that keeps
// touching, and a dispatcher for the lease holder "me".
type leaseSetup struct {
	clock   *fixedClock
	store   engine.Store
	holder  *dispatch.LeaseHolder
	d       *dispatch.Dispatcher
	h       *dispatch.Housekeeper
	running *engine.Job
}

const deadLease = 2 * time.Second

func newLeaseSetup(t *testing.T) *leaseSetup {
	t.Helper()
	clock := &fixedClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := memstore.New(clock)
	addNodeAs(t, s, "dead", 4, func(n *engine.Node) { n.Lease = engine.Duration(deadLease) })
	addNodeAs(t, s, "live", 4, nil)
	ctx := context.Background()
	j := addJob(t, s, engine.TypeSleep, 1)
	running, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(j, "dead"))
	if err != nil {
		t.Fatal(err)
	}
	holder := dispatch.NewLeaseHolder(s, "me", time.Hour, clock, quietLog())
	d := dispatch.NewDispatcher(s, dispatch.OfferFunc((&fakeNodes{store: s}).Offer), placement.LoadFactor{}, clock, quietLog())
	d.SetLease(holder)
	h := dispatch.NewHousekeeper(s, holder, quietLog())
	return &leaseSetup{clock: clock, store: s, holder: holder, d: d, h: h, running: running}
}

// advance moves the clock on; "live" touches the store as a live node does.
func (l *leaseSetup) advance(t *testing.T, by time.Duration) {
	t.Helper()
	l.clock.Advance(by)
	if _, err := l.store.NodeTouch(context.Background(), engine.NodeTouchParams{Name: "live"}); err != nil {
		t.Fatal(err)
	}
}

// roundResult is what a pass of housekeeping and then a round did.
type roundResult struct {
	dispatch.RoundStats
	Recovered int
}

// round runs a pass of housekeeping, then a dispatch round, as the lease
// holder does.
func (l *leaseSetup) round(t *testing.T) roundResult {
	t.Helper()
	if !l.holder.Renew(context.Background()) {
		t.Fatal("the holder lost the lease")
	}
	house, err := l.h.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	stats, err := l.d.Round(context.Background(), l.holder.Trusted)
	if err != nil {
		t.Fatal(err)
	}
	return roundResult{RoundStats: stats, Recovered: house.Recovered}
}

func TestSilentNodesJobsRestartOnlyPastItsLeaseAndMargin(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	ctx := context.Background()
	if !l.holder.Renew(ctx) {
		t.Fatal("no lease")
	}
	// Heartbeats marking a node OFFLINE do not restart its jobs: it still
	// touches the store, so it still runs them.
	if err := l.store.NodeSetState(ctx, "dead", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	if _, err := l.store.NodeTouch(ctx, engine.NodeTouchParams{Name: "dead"}); err != nil {
		t.Fatal(err)
	}
	l.advance(t, deadLease+engine.NodeLeaseMargin/2)
	if stats := l.round(t); stats.Recovered != 0 {
		t.Fatalf("recovered %d jobs of a node silent for less than its lease and margin", stats.Recovered)
	}
	if j := jobOf(t, l.store, l.running.ID); j.Status != engine.StatusRunning || j.Node != "dead" {
		t.Fatalf("job is %s on %q, want left RUNNING on dead", j.Status, j.Node)
	}
	// Its state does not matter either: ONLINE or OFFLINE, a node silent
	// past its lease and the margin has stopped its runs.
	if err := l.store.NodeSetState(ctx, "dead", engine.NodeOnline); err != nil {
		t.Fatal(err)
	}
	l.advance(t, engine.NodeLeaseMargin)
	if stats := l.round(t); stats.Recovered != 1 {
		t.Fatalf("recovered %d jobs, want the one of the silent node", stats.Recovered)
	}
	j := jobOf(t, l.store, l.running.ID)
	if j.Status != engine.StatusRunning || j.Attempt != 2 {
		t.Fatalf("job is %s on %q attempt %d, want RUNNING again, attempt 2", j.Status, j.Node, j.Attempt)
	}
	term := l.holder.Term()
	if j.Dispatcher != "me" || j.LeaseTerm != term.Term {
		t.Errorf("attempt 2 started under %q term %d, want me term %d", j.Dispatcher, j.LeaseTerm, term.Term)
	}
}

func TestNewLeaseHolderWaitsOneNodeLeaseBeforeRecovering(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	// Every dispatcher was gone for an hour: dead has been silent long
	// past its lease when "me" takes the lease.
	l.advance(t, time.Hour)
	if stats := l.round(t); stats.Recovered != 0 {
		t.Fatalf("a term just begun recovered %d jobs", stats.Recovered)
	}
	l.advance(t, deadLease/2)
	if stats := l.round(t); stats.Recovered != 0 {
		t.Fatalf("a term younger than the node's lease recovered %d jobs", stats.Recovered)
	}
	l.advance(t, deadLease)
	if stats := l.round(t); stats.Recovered != 1 {
		t.Fatalf("recovered %d jobs once the term is older than the node's lease, want 1", stats.Recovered)
	}
}

func TestHousekeeperWithoutATermRecoversNothing(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	h := dispatch.NewHousekeeper(l.store, nil, quietLog())
	l.advance(t, time.Hour)
	stats, err := h.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Recovered != 0 {
		t.Fatalf("housekeeping without a lease term recovered %d jobs", stats.Recovered)
	}
}

// staleTerm tells a term the store no longer holds.
type staleTerm struct{ term engine.LeaseTerm }

func (s staleTerm) Term() engine.LeaseTerm { return s.term }

func TestOffersUnderALostTermStartNothing(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	ctx := context.Background()
	if !l.holder.Renew(ctx) {
		t.Fatal("no lease")
	}
	old := l.holder.Term()
	if err := l.holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	other := dispatch.NewLeaseHolder(l.store, "other", time.Hour, l.clock, quietLog())
	if !other.Renew(ctx) {
		t.Fatal("other did not take the released lease")
	}
	queued := addJob(t, l.store, engine.TypeSleep, 1)
	nodes := &fakeNodes{store: l.store}
	d := dispatch.NewDispatcher(l.store, dispatch.OfferFunc(nodes.Offer), placement.LoadFactor{}, l.clock, quietLog())
	d.SetLease(staleTerm{old})
	stats, err := d.Round(ctx, always)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.recorded()) == 0 {
		t.Fatal("no offer was made")
	}
	if j := jobOf(t, l.store, queued.ID); stats.Dispatched != 0 || j.Status != engine.StatusQueued || j.Attempt != 0 {
		t.Fatalf("dispatched %d; job %s attempt %d, want it left QUEUED by offers under lost term %d", stats.Dispatched, j.Status, j.Attempt, old.Term)
	}
	d.SetLease(other)
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	if j := jobOf(t, l.store, queued.ID); j.Status != engine.StatusRunning || j.Dispatcher != "other" || j.LeaseTerm != other.Term().Term {
		t.Fatalf("job %s under %q term %d, want RUNNING under other's term %d", j.Status, j.Dispatcher, j.LeaseTerm, other.Term().Term)
	}
}

func TestHeartbeatTimeoutFollowsItsInterval(t *testing.T) {
	t.Parallel()
	for interval, want := range map[time.Duration]time.Duration{
		10 * time.Millisecond: dispatch.MinHeartbeatTimeout,
		time.Second:           time.Second,
		time.Minute:           dispatch.MaxHeartbeatTimeout,
	} {
		if got := dispatch.HeartbeatTimeout(interval); got != want {
			t.Errorf("HeartbeatTimeout(%s) = %s, want %s", interval, got, want)
		}
	}
}

func TestDispatcherUnderALeaseMakesNoOffersWithoutItsTerm(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	addJob(t, l.store, engine.TypeSleep, 1)
	nodes := &fakeNodes{store: l.store}
	d := dispatch.NewDispatcher(l.store, dispatch.OfferFunc(nodes.Offer), placement.LoadFactor{}, l.clock, quietLog())
	d.SetLease(staleTerm{}) // the holder lost its lease
	if _, err := d.Round(context.Background(), always); !errors.Is(err, dispatch.ErrUntrusted) {
		t.Fatalf("round without a term: %v, want ErrUntrusted", err)
	}
	if offers := nodes.recorded(); len(offers) != 0 {
		t.Fatalf("offers made without a term: %v", offers)
	}
}

// staleNodes is a housekeeping store whose node listing is a copy taken
// earlier, as a dispatcher that stalled between reading the nodes and
// judging them sees it; the rest is store's.
type staleNodes struct {
	store dispatch.HousekeepingStore
	nodes []*engine.Node
}

func (s staleNodes) NodeList(context.Context) ([]*engine.Node, error) { return s.nodes, nil }

func (s staleNodes) Now(ctx context.Context) (time.Time, error) { return s.store.Now(ctx) }

func (s staleNodes) NodeGet(ctx context.Context, name string) (*engine.Node, error) {
	return s.store.NodeGet(ctx, name)
}

func (s staleNodes) ReservationList(ctx context.Context) ([]engine.Reservation, error) {
	return s.store.ReservationList(ctx)
}

func (s staleNodes) ReservationDelete(ctx context.Context, jobID int64) error {
	return s.store.ReservationDelete(ctx, jobID)
}

func (s staleNodes) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	return s.store.JobGet(ctx, id)
}

func (s staleNodes) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	return s.store.JobList(ctx, p)
}

func (s staleNodes) JobListRollbackPending(ctx context.Context, limit int) ([]*engine.Job, error) {
	return s.store.JobListRollbackPending(ctx, limit)
}

func (s staleNodes) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	return s.store.JobUpdateMany(ctx, us)
}

func (s staleNodes) Tx(ctx context.Context, fn func(tx engine.TxStore) error) error {
	return s.store.Tx(ctx, fn)
}

// A round judges a node's silence on its rows and on a now read later: the
// node may have touched the store in between, and then it runs its jobs.
func TestANodeThatSpokeSinceTheRoundReadItKeepsItsJobs(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	ctx := context.Background()
	if !l.holder.Renew(ctx) {
		t.Fatal("no lease")
	}
	old, err := l.store.NodeList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.advance(t, deadLease+2*engine.NodeLeaseMargin)
	if _, err := l.store.NodeTouch(ctx, engine.NodeTouchParams{Name: "dead"}); err != nil {
		t.Fatal(err)
	}
	h := dispatch.NewHousekeeper(staleNodes{store: l.store, nodes: old}, l.holder, quietLog())
	if !l.holder.Renew(ctx) {
		t.Fatal("no lease")
	}
	stats, err := h.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Recovered != 0 {
		t.Fatalf("recovered %d jobs of a node that touched the store after housekeeping read it", stats.Recovered)
	}
	if j := jobOf(t, l.store, l.running.ID); j.Status != engine.StatusRunning || j.Node != "dead" || j.Attempt != 1 {
		t.Fatalf("job is %s on %q attempt %d, want left RUNNING on dead", j.Status, j.Node, j.Attempt)
	}
}

// A node whose only job waits for its children runs nothing that holds
// load; its silence still gives that job back, and the children of the
// attempt it waited for are cancelled: the next attempt makes its own.
func TestSilentNodesWaitingParentRestartsWithItsChildrenCancelled(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	ctx := context.Background()
	if !l.holder.Renew(ctx) {
		t.Fatal("no lease")
	}
	waiting, err := l.store.JobUpdate(ctx, engine.JobUpdate{ID: l.running.ID, From: engine.StatusRunning,
		Version: l.running.Version, To: engine.StatusWaiting})
	if err != nil {
		t.Fatal(err)
	}
	child, err := l.store.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, MaxAttempts: 1,
		Status: engine.StatusInstantiated, ParentID: &waiting.ID})
	if err != nil {
		t.Fatal(err)
	}
	l.advance(t, deadLease+engine.NodeLeaseMargin/2)
	if stats := l.round(t); stats.Recovered != 0 {
		t.Fatalf("recovered %d jobs of a node silent for less than its lease and margin", stats.Recovered)
	}
	// Heartbeats have marked it OFFLINE by now: nothing is placed there.
	if err := l.store.NodeSetState(ctx, "dead", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	l.advance(t, engine.NodeLeaseMargin)
	if stats := l.round(t); stats.Recovered != 1 {
		t.Fatalf("recovered %d jobs, want the waiting parent of the silent node", stats.Recovered)
	}
	if j := jobOf(t, l.store, waiting.ID); j.Node == "dead" || j.Status == engine.StatusWaiting {
		t.Errorf("the parent is %s on %q, want taken from dead", j.Status, j.Node)
	}
	if c := jobOf(t, l.store, child.ID); c.Status != engine.StatusCancelled {
		t.Errorf("the child of the lost attempt is %s, want CANCELLED", c.Status)
	}
	if stats := l.round(t); stats.Recovered != 0 {
		t.Errorf("a later round recovered %d more jobs", stats.Recovered)
	}
}

// A node silent past its node lease has stopped its runs and would take no
// job: it is offered none, even before its jobs are recovered, and explain
// says why.
func TestSilentNodeIsOfferedNothing(t *testing.T) {
	t.Parallel()
	l := newLeaseSetup(t)
	ctx := context.Background()
	// live carries more than dead, so the load factor would pick dead.
	for range 2 {
		if _, err := l.store.JobUpdate(ctx, engine.QueuedStartUpdate(addJob(t, l.store, engine.TypeSleep, 1), "live")); err != nil {
			t.Fatal(err)
		}
	}
	j := addJob(t, l.store, engine.TypeSleep, 1)
	e, err := dispatch.Explain(ctx, l.store, j.ID, placement.LoadFactor{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Nodes[0].Node != "dead" || !e.Nodes[0].Eligible {
		t.Fatalf("while dead is heard from: %+v, want it eligible", e.Nodes[0])
	}

	l.advance(t, deadLease+engine.NodeLeaseMargin/2) // past its lease, not yet recovered
	if e, err = dispatch.Explain(ctx, l.store, j.ID, placement.LoadFactor{}); err != nil {
		t.Fatal(err)
	}
	v := e.Nodes[0]
	if v.Node != "dead" || v.Eligible || v.Cause != placement.CauseSilent || !strings.Contains(v.Reason, "past its node lease 2s") {
		t.Errorf("dead's verdict %+v, want silent past its node lease", v)
	}
	stats := l.round(t)
	if stats.Recovered != 0 {
		t.Fatalf("recovered %d jobs within the margin", stats.Recovered)
	}
	if got := jobOf(t, l.store, j.ID); got.Node != "live" {
		t.Errorf("the job went to %q, want live: dead is silent", got.Node)
	}
}

// TestHousekeeperRepairsChildrenOfALostAttempt: a job taken back to the
// queue without its follow-ups, as a crash between two steps of an older
// jobctl left it, has the children of its lost attempt cancelled by the
// lease holder's housekeeping within a few rounds of repair, and the
// repair changes nothing more after.
func TestHousekeeperRepairsChildrenOfALostAttempt(t *testing.T) {
	l := newLeaseSetup(t)
	ctx := context.Background()
	child, err := l.store.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, Status: engine.StatusQueued,
		MaxAttempts: 1, ParentID: &l.running.ID})
	if err != nil {
		t.Fatal(err)
	}
	l.advance(t, time.Second)
	if _, err := l.store.JobUpdate(ctx, engine.RecoverUpdate(l.running, "node dead is gone")); err != nil {
		t.Fatal(err)
	}
	repaired := 0
	for range 3 * dispatch.RepairEvery {
		if !l.holder.Renew(ctx) {
			t.Fatal("the holder lost the lease")
		}
		stats, err := l.h.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		repaired += stats.Repaired
	}
	if got, _ := l.store.JobGet(ctx, child.ID); got.Status != engine.StatusCancelled {
		t.Errorf("child of the lost attempt after %d passes: %s; want CANCELLED", 3*dispatch.RepairEvery, got.Status)
	}
	if repaired != 1 {
		t.Errorf("the passes repaired %d jobs; want 1, once", repaired)
	}
}

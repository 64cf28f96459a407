package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/placement"
)

// limitSetup is an in-memory store with three nodes that have room for
// every job, 10 queued sleep jobs (the limited type) and 5 noop jobs.
type limitSetup struct {
	store  engine.Store
	clock  *fixedClock
	sleeps []*engine.Job
	noops  []*engine.Job
}

func newLimitSetup(t *testing.T) *limitSetup {
	t.Helper()
	clock := &fixedClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := &limitSetup{store: memstore.New(clock), clock: clock}
	for _, name := range []string{"a", "b", "c"} {
		addNode(t, l.store, name, 100, engine.TypeSleep, engine.TypeNoop)
	}
	for range 10 {
		l.sleeps = append(l.sleeps, addJob(t, l.store, engine.TypeSleep, 1))
	}
	for range 5 {
		l.noops = append(l.noops, addJob(t, l.store, engine.TypeNoop, 1))
	}
	return l
}

func (l *limitSetup) dispatcher() *dispatch.Dispatcher {
	return dispatch.NewDispatcher(l.store, dispatch.OfferFunc((&fakeNodes{store: l.store}).Offer), placement.LoadFactor{}, l.clock, quietLog())
}

func setLimit(t *testing.T, s engine.Store, typ string, n int) {
	t.Helper()
	if err := s.TypeLimitSet(context.Background(), engine.TypeLimitSetParams{Type: typ, MaxRunning: n}); err != nil {
		t.Fatal(err)
	}
}

// running counts the jobs of typ holding load, and the nodes they are on.
func running(t *testing.T, s engine.Store, typ string) (int, map[string]bool) {
	t.Helper()
	jobs, err := s.JobList(context.Background(), engine.JobListParams{Types: []string{typ}, Statuses: engine.LoadHoldingStatuses})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, j := range jobs {
		nodes[j.Node] = true
	}
	return len(jobs), nodes
}

// finishOne ends one running job of typ.
func finishOne(t *testing.T, s engine.Store, typ string) {
	t.Helper()
	jobs, err := s.JobList(context.Background(), engine.JobListParams{Types: []string{typ}, Statuses: []engine.Status{engine.StatusRunning}, Limit: 1})
	if err != nil || len(jobs) == 0 {
		t.Fatalf("no running %s job to finish: %v", typ, err)
	}
	finish(t, s, jobs[0].ID)
}

func TestTypeLimitCapsEachRoundAcrossNodes(t *testing.T) {
	t.Parallel()
	l := newLimitSetup(t)
	setLimit(t, l.store, engine.TypeSleep, 2)
	d := l.dispatcher()
	d.SetPageSize(3) // the limit holds across pages as within one

	stats := round(t, d)
	if n, _ := running(t, l.store, engine.TypeSleep); n != 2 {
		t.Fatalf("%d sleep jobs run after the first round, want the limit of 2", n)
	}
	if n, _ := running(t, l.store, engine.TypeNoop); n != 5 {
		t.Errorf("%d noop jobs run, want all 5: their type has no limit", n)
	}
	// The round reads no more sleep jobs than the limit lets start: the
	// rest of the queue waits unread.
	if stats.Dispatched != 7 || stats.Considered != 7 || !unreadFor(stats, engine.TypeSleep, dispatch.WaitTypeLimit) {
		t.Errorf("stats %+v, want 7 read and dispatched and the sleep queue unread for its type limit", stats)
	}
	if sum := stats.Summary(); sum != "jobs wait unread: type sleep (QUEUED) type-limit, at its limit of 2 running" {
		t.Errorf("summary %q does not name the type limit", sum)
	}
	// Jobs held back are left as they were.
	for _, j := range l.sleeps[2:] {
		if got := jobOf(t, l.store, j.ID); got.Status != engine.StatusQueued || got.Version != j.Version {
			t.Errorf("held-back job %d is %s version %d, want QUEUED version %d untouched", j.ID, got.Status, got.Version, j.Version)
		}
	}

	// At the limit, a round starts none; each job that ends lets one more start.
	if stats := round(t, d); stats.Dispatched != 0 {
		t.Fatalf("a round at the limit dispatched %d", stats.Dispatched)
	}
	finishOne(t, l.store, engine.TypeSleep)
	if stats := round(t, d); stats.Dispatched != 1 {
		t.Fatalf("after one ended a round dispatched %d, want 1", stats.Dispatched)
	}
	if n, _ := running(t, l.store, engine.TypeSleep); n != 2 {
		t.Fatalf("%d sleep jobs run, want 2", n)
	}

	// A raised limit frees as many more as it allows, a removed one the rest.
	setLimit(t, l.store, engine.TypeSleep, 5)
	round(t, d)
	if n, nodes := running(t, l.store, engine.TypeSleep); n != 5 || len(nodes) < 2 {
		t.Fatalf("%d sleep jobs run on %v under a limit of 5, want 5 over several nodes", n, nodes)
	}
	if err := l.store.TypeLimitDelete(context.Background(), engine.TypeSleep); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	if n, _ := running(t, l.store, engine.TypeSleep); n != 9 {
		t.Fatalf("%d sleep jobs run without a limit, want the 9 that have not ended", n)
	}
}

// TestTypeLimitHoldsForANewLeaseHolder: the count comes from the store,
// so a dispatcher that takes over obeys the limit from its first round.
func TestTypeLimitHoldsForANewLeaseHolder(t *testing.T) {
	t.Parallel()
	l := newLimitSetup(t)
	setLimit(t, l.store, engine.TypeSleep, 2)
	ctx := context.Background()
	first := dispatch.NewLeaseHolder(l.store, "first", time.Minute, l.clock, quietLog())
	d1 := l.dispatcher()
	d1.SetLease(first)
	if !first.Renew(ctx) {
		t.Fatal("first did not get the lease")
	}
	if _, err := d1.Round(ctx, first.Trusted); err != nil {
		t.Fatal(err)
	}
	if n, _ := running(t, l.store, engine.TypeSleep); n != 2 {
		t.Fatalf("%d sleep jobs run under the first holder, want 2", n)
	}
	// The first holder is gone; its lease runs out and another takes it.
	l.clock.Advance(2 * time.Minute)
	second := dispatch.NewLeaseHolder(l.store, "second", time.Minute, l.clock, quietLog())
	d2 := l.dispatcher()
	d2.SetLease(second)
	if !second.Renew(ctx) {
		t.Fatal("second did not get the lease")
	}
	stats, err := d2.Round(ctx, second.Trusted)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := running(t, l.store, engine.TypeSleep); n != 2 || !unreadFor(stats, engine.TypeSleep, dispatch.WaitTypeLimit) {
		t.Fatalf("the new holder's first round left %d sleep jobs running (stats %+v), want the limit of 2", n, stats)
	}
	finishOne(t, l.store, engine.TypeSleep)
	if stats, err = d2.Round(ctx, second.Trusted); err != nil || stats.Dispatched != 1 {
		t.Fatalf("after one ended the new holder dispatched %d (%v), want 1", stats.Dispatched, err)
	}
}

// TestTypeLimitCountsAJobWhoseAnswerWasLost: a node that started a job and
// whose answer was lost may run it, so its place under the limit stays
// taken for the rest of the round.
func TestTypeLimitCountsAJobWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	l := newLimitSetup(t)
	setLimit(t, l.store, engine.TypeSleep, 2)
	nodes := &fakeNodes{store: l.store}
	lost := 0
	offer := func(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult {
		if o.Type == engine.TypeSleep && lost == 0 {
			lost++
			if _, err := l.store.JobUpdate(ctx, engine.StartOfferUpdate(o, n.Name)); err != nil {
				t.Errorf("start job %d: %v", o.JobID, err)
			}
			return engine.OfferResult{Verdict: engine.OfferError, Reason: "connection reset"}
		}
		return nodes.Offer(ctx, n, o)
	}
	d := dispatch.NewDispatcher(l.store, dispatch.OfferFunc(offer), placement.LoadFactor{}, l.clock, quietLog())
	d.SetPageSize(1)
	round(t, d)
	if n, _ := running(t, l.store, engine.TypeSleep); n > 2 || n == 0 {
		t.Fatalf("%d sleep jobs run after a round with a lost answer, want 1 or 2 under a limit of 2", n)
	}
	round(t, d)
	if n, _ := running(t, l.store, engine.TypeSleep); n != 2 {
		t.Fatalf("%d sleep jobs run after the next round, want the limit of 2", n)
	}
}

func TestExplainNamesTheTypeLimit(t *testing.T) {
	t.Parallel()
	clock := &fixedClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := memstore.New(clock)
	addNode(t, s, "a", 2)
	ctx := context.Background()
	start := func() {
		if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(addJob(t, s, engine.TypeSleep, 1), "a")); err != nil {
			t.Fatal(err)
		}
	}
	start()
	queued := addJob(t, s, engine.TypeSleep, 1)
	const reason = "held back: type sleep is at its limit of 1 running (jobctl limits)"

	// Under its limit, the limit is shown but holds nothing back.
	setLimit(t, s, engine.TypeSleep, 2)
	e := explain(t, s, queued.ID)
	if e.TypeLimit == nil || e.TypeLimit.Running != 1 || e.AtLimit || strings.Contains(e.Conclusion, "held back") {
		t.Fatalf("under the limit: type limit %+v, at limit %v, conclusion %q", e.TypeLimit, e.AtLimit, e.Conclusion)
	}

	// At its limit, with a node that has room.
	setLimit(t, s, engine.TypeSleep, 1)
	e = explain(t, s, queued.ID)
	if want := reason + "; once it is under it, node a would be offered it first"; !e.AtLimit || e.Conclusion != want {
		t.Errorf("at the limit: at limit %v, conclusion\n %q\nwant\n %q", e.AtLimit, e.Conclusion, want)
	}

	// At its limit, and no node has room: both are said.
	setLimit(t, s, engine.TypeNoop, 5)
	if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(addJob(t, s, engine.TypeSleep, 1), "a")); err != nil {
		t.Fatal(err)
	}
	e = explain(t, s, queued.ID)
	if want := reason + "; and no node can take it now: 1 busy"; !e.AtLimit || e.Conclusion != want {
		t.Errorf("at the limit and no room: conclusion\n %q\nwant\n %q", e.Conclusion, want)
	}

	// Without a limit nothing is said of one.
	if err := s.TypeLimitDelete(ctx, engine.TypeSleep); err != nil {
		t.Fatal(err)
	}
	if e = explain(t, s, queued.ID); e.TypeLimit != nil || e.AtLimit || strings.Contains(e.Conclusion, "limit") {
		t.Errorf("without a limit: type limit %+v, conclusion %q", e.TypeLimit, e.Conclusion)
	}
}

// unreadFor reports whether the round left typ's queue unread for cause.
func unreadFor(stats dispatch.RoundStats, typ, cause string) bool {
	for _, u := range stats.Unread {
		if u.Type == typ && u.Cause == cause {
			return true
		}
	}
	return false
}

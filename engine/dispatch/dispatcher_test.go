package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

func newDispatcher(s engine.Store, nodes *fakeNodes) *dispatch.Dispatcher {
	return dispatch.NewDispatcher(s, dispatch.OfferFunc(nodes.Offer), placement.LoadFactor{}, engine.SystemClock{}, quietLog())
}

func TestRoundKeepsEveryNodeUnderItsMaxLoad(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "big", 4)
	addNode(t, s, "small", 2)
	for range 8 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &fakeNodes{store: s}
	stats, err := newDispatcher(s, nodes).Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Dispatched != 6 || stats.Considered != 6 {
		t.Fatalf("stats = %+v, want the 6 that fit read (and one more, the queue goes on) and dispatched", stats)
	}
	loads := map[string]engine.NodeLoad{}
	list, err := s.NodeList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list {
		loads[n.Name] = engine.NodeLoad{Load: n.Load, Running: n.Running}
	}
	if loads["big"].Load != 4 || loads["small"].Load != 2 {
		t.Fatalf("loads = %+v, want big 4, small 2", loads)
	}
	queued, _ := s.JobList(context.Background(), engine.JobListParams{Statuses: engine.DispatchableStatuses})
	if len(queued) != 2 {
		t.Fatalf("%d jobs left QUEUED, want 2 (no node had room)", len(queued))
	}
}

func TestRoundDispatchesRestartBeforeQueuedAndWorkflowsLast(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "n", 100, engine.TypeSleep, engine.TypeWorkflow)
	ctx := context.Background()
	wf := addJob(t, s, engine.TypeWorkflow, 1)
	q := addJob(t, s, engine.TypeSleep, 1)
	r := addJob(t, s, engine.TypeSleep, 1)
	// Make r a RESTART job: run it and fail it back to RESTART.
	j := jobOf(t, s, r.ID)
	j, _ = s.JobUpdate(ctx, engine.QueuedStartUpdate(j, "n"))
	if _, err := s.JobUpdate(ctx, engine.RecoverUpdate(j, "its node restarted")); err != nil {
		t.Fatal(err)
	}
	nodes := &fakeNodes{store: s}
	if _, err := newDispatcher(s, nodes).Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	var order []int64
	for _, o := range nodes.recorded() {
		order = append(order, o.job)
	}
	want := []int64{r.ID, q.ID, wf.ID}
	if len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Fatalf("offer order = %v, want %v (RESTART, QUEUED, workflow)", order, want)
	}
}

func TestDeclinedOfferGoesToTheNextNodeAndBackToTheQueueWhenAllDecline(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 4)
	addNode(t, s, "b", 4)
	job := addJob(t, s, engine.TypeSleep, 1)
	nodes := &fakeNodes{store: s, answer: func(string, engine.DispatchOffer) engine.OfferResult {
		return engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "busy"}
	}}
	if _, err := newDispatcher(s, nodes).Round(context.Background(), always); err != nil {
		t.Fatal(err)
	}
	if got := nodes.recorded(); len(got) != 2 || got[0].node == got[1].node {
		t.Fatalf("offers = %+v, want one to each node", got)
	}
	if j := jobOf(t, s, job.ID); j.Status != engine.StatusQueued || j.Node != "" || j.Attempt != 0 {
		t.Fatalf("job after all declined = %s on %q attempt %d, want QUEUED, no node, attempt 0", j.Status, j.Node, j.Attempt)
	}
}

func TestPermanentRefusalFailsTheJob(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 4)
	job := addJob(t, s, engine.TypeSleep, 1)
	nodes := &fakeNodes{store: s, answer: func(string, engine.DispatchOffer) engine.OfferResult {
		return engine.OfferResult{Verdict: engine.OfferRefused, Reason: "invalid payload"}
	}}
	stats, err := newDispatcher(s, nodes).Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	j := jobOf(t, s, job.ID)
	if j.Status != engine.StatusFailed || stats.Failed != 1 || j.FinishedAt == nil {
		t.Fatalf("job = %s (%q), stats %+v; want FAILED", j.Status, j.Message, stats)
	}
}

func TestRoundPagesThroughEveryDispatchableJob(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 100)
	for range 7 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &fakeNodes{store: s}
	d := newDispatcher(s, nodes)
	d.SetPageSize(2)
	stats, err := d.Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Dispatched != 7 {
		t.Fatalf("dispatched %d of 7 with pages of 2", stats.Dispatched)
	}
}

func TestRoundStopsWhenTheLeaseIsNoLongerTrusted(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 100)
	for range 3 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &fakeNodes{store: s}
	d := newDispatcher(s, nodes)
	d.SetPageSize(1) // a batch per job: the lease is asked before each batch's offers
	// The lease is trusted until the first job has started.
	trusted := func() bool {
		running, _ := s.JobList(context.Background(), engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}})
		return len(running) == 0
	}
	stats, err := d.Round(context.Background(), trusted)
	if !errors.Is(err, dispatch.ErrUntrusted) || stats.Dispatched != 1 {
		t.Fatalf("err = %v, dispatched %d; want ErrUntrusted after 1", err, stats.Dispatched)
	}
	queued, _ := s.JobList(context.Background(), engine.JobListParams{Statuses: engine.DispatchableStatuses})
	if len(queued) != 2 {
		t.Fatalf("%d jobs QUEUED after the round stopped, want 2", len(queued))
	}
}

func TestOversizedJobReservesTheLargestNodeUntilItDrains(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNode(t, s, "big", 4)
	// Something already runs on big.
	busy := addJob(t, s, engine.TypeSleep, 1)
	nodes := &fakeNodes{store: s}
	d := newDispatcher(s, nodes)
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	huge := addJob(t, s, engine.TypeSleep, 10)
	small := addJob(t, s, engine.TypeSleep, 1)
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	if j := jobOf(t, s, huge.ID); j.Status != engine.StatusQueued {
		t.Fatalf("oversized job is %s while big is busy, want QUEUED", j.Status)
	}
	if j := jobOf(t, s, small.ID); j.Status != engine.StatusQueued {
		t.Fatalf("a small job took the node an oversized job waits for: %s", j.Status)
	}
	// big drains: the oversized job runs there first.
	j := jobOf(t, s, busy.ID)
	if _, err := s.JobUpdate(ctx, engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, false, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	if j := jobOf(t, s, huge.ID); j.Status != engine.StatusRunning || j.Node != "big" {
		t.Fatalf("oversized job = %s on %q after big drained, want RUNNING on big", j.Status, j.Node)
	}
	if j := jobOf(t, s, small.ID); j.Status != engine.StatusQueued {
		t.Fatalf("small job = %s, want QUEUED behind the oversized one", j.Status)
	}
}

func TestMonitorMarksANodeOfflineAfterTwoMissedHeartbeats(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "self", 4)
	addNode(t, s, "flaky", 4)
	fail := true
	check := func(_ context.Context, n *engine.Node) error {
		if n.Name == "self" {
			t.Error("a node sent a heartbeat to itself")
		}
		if fail {
			return errors.New("connection refused")
		}
		return nil
	}
	m := dispatch.NewMonitor(s, "self", check, time.Second, quietLog())
	ctx := context.Background()
	get := func() *engine.Node {
		n, err := s.NodeGet(ctx, "flaky")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	_ = m.Beat(ctx)
	if n := get(); n.State != engine.NodeOnline || n.BeatMissedAt == nil {
		t.Fatalf("after one missed heartbeat: %s, missed at %v; want ONLINE on watch", n.State, n.BeatMissedAt)
	}
	fail = false
	_ = m.Beat(ctx) // answered: the watch is reset
	if n := get(); n.BeatMissedAt != nil {
		t.Fatalf("an answered heartbeat left the watch recorded at %v", n.BeatMissedAt)
	}
	fail = true
	_ = m.Beat(ctx)
	if get().State != engine.NodeOnline {
		t.Fatal("two misses that were not in a row marked the node offline")
	}
	_ = m.Beat(ctx)
	if n := get(); n.State != engine.NodeOffline || n.BeatMissedAt != nil {
		t.Fatalf("two misses in a row: %s, missed at %v; want OFFLINE, the watch over", n.State, n.BeatMissedAt)
	}
}

func TestAReservationEndsWhenItsJobIsBlockedByItsKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNode(t, s, "big", 4)
	nodes := &fakeNodes{store: s}
	d := newDispatcher(s, nodes)
	busy := addJob(t, s, engine.TypeSleep, 1)
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	huge, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeSleep, Load: 10, Key: "k", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Round(ctx, always); err != nil { // huge waits for big to drain
		t.Fatal(err)
	}
	// A job of the same key starts (say, requeued): huge may not run beside it,
	// so it no longer holds big for itself.
	other, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, Key: "k", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(other, "big")); err != nil {
		t.Fatal(err)
	}
	small := addJob(t, s, engine.TypeSleep, 1)
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	if j := jobOf(t, s, small.ID); j.Status != engine.StatusRunning || j.Node != "big" {
		t.Errorf("small job = %s on %q; want it on big, no longer held for a key-blocked job", j.Status, j.Node)
	}
	// Even once big is idle, huge stays queued while its key is busy.
	for _, id := range []int64{busy.ID, small.ID} {
		j := jobOf(t, s, id)
		if _, err := s.JobUpdate(ctx, engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, false, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Round(ctx, always); err != nil {
		t.Fatal(err)
	}
	if j := jobOf(t, s, huge.ID); j.Status != engine.StatusQueued {
		t.Errorf("oversized job = %s while another job of its key runs; want QUEUED", j.Status)
	}
}

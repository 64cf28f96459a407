package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/memstore"
)

// retainJob runs a new noop job to the end with outcome.
func retainJob(t *testing.T, s engine.Store, outcome engine.RunOutcome) *engine.Job {
	t.Helper()
	ctx := t.Context()
	j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if j, err = s.JobUpdate(ctx, engine.QueuedStartUpdate(j, "n1")); err != nil {
		t.Fatal(err)
	}
	if outcome == "" {
		return j
	}
	j, err = s.JobUpdate(ctx, engine.OutcomeUpdate(j, engine.RunResult{Outcome: outcome}, false, nil))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func exists(t *testing.T, s engine.Store, j *engine.Job) bool {
	t.Helper()
	_, err := s.JobGet(t.Context(), j.ID)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func countLeft(t *testing.T, s engine.Store, jobs []*engine.Job) int {
	t.Helper()
	n := 0
	for _, j := range jobs {
		if exists(t, s, j) {
			n++
		}
	}
	return n
}

func TestRetainInterval(t *testing.T) {
	t.Parallel()
	for retain, want := range map[time.Duration]time.Duration{
		time.Minute:         time.Minute,
		5 * time.Minute:     time.Minute,
		time.Hour:           6 * time.Minute,
		100 * time.Minute:   10 * time.Minute,
		30 * 24 * time.Hour: 10 * time.Minute,
	} {
		if got := dispatch.RetainInterval(retain); got != want {
			t.Errorf("RetainInterval(%s) = %s, want %s", retain, got, want)
		}
	}
}

// Only the node that holds the lease prunes, and only jobs that ended
// longer ago than the retention; running jobs stay whatever their age.
func TestRetainerPrunesOnlyWhileHoldingTheLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memstore.New(clock)
	old := []*engine.Job{retainJob(t, s, engine.RunSucceeded), retainJob(t, s, engine.RunFailed)}
	running := retainJob(t, s, "")
	clock.Advance(2 * time.Hour)
	young := retainJob(t, s, engine.RunSucceeded)

	const ttl = 30 * time.Second
	other := dispatch.NewLeaseHolder(s, "other", ttl, clock, quietLog())
	mine := dispatch.NewLeaseHolder(s, "mine", ttl, clock, quietLog())
	if !other.Renew(ctx) || mine.Renew(ctx) {
		t.Fatal("the other node should hold the lease")
	}
	r := dispatch.NewRetainer(s, time.Hour, mine.Trusted, clock, quietLog())
	if r.Step(ctx) {
		t.Error("a pass ran on a node without the lease")
	}
	if countLeft(t, s, old) != len(old) {
		t.Fatal("jobs were pruned by a node without the lease")
	}

	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if !mine.Renew(ctx) {
		t.Fatal("the lease was released, yet this node cannot take it")
	}
	if !r.Step(ctx) {
		t.Fatal("no pass on the lease holder")
	}
	if n := countLeft(t, s, old); n != 0 {
		t.Errorf("%d old ended jobs left after a pass", n)
	}
	if !exists(t, s, running) || !exists(t, s, young) {
		t.Error("a pass removed a running job or one that ended within the retention")
	}

	if r.Step(ctx) {
		t.Error("a second pass ran before the interval was over")
	}
	clock.Advance(time.Hour + dispatch.RetainInterval(time.Hour))
	if !mine.Renew(ctx) {
		t.Fatal("the lease holder cannot renew")
	}
	if !r.Step(ctx) {
		t.Fatal("no pass once the interval was over")
	}
	if exists(t, s, young) {
		t.Error("a job that ended more than the retention ago survived a pass")
	}
	if !exists(t, s, running) {
		t.Error("a pass removed a running job")
	}
}

// A pass removes a batch at a time with a pause between batches at least
// RetainPause long, and stops between batches once the lease is lost.
func TestRetainerBatchesAndStopsWithTheLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memstore.New(clock)
	var old []*engine.Job
	for range 7 {
		old = append(old, retainJob(t, s, engine.RunSucceeded))
	}
	clock.Advance(2 * time.Hour)

	held := true
	var pauses []time.Duration
	r := dispatch.NewRetainer(s, time.Hour, func() bool { return held }, clock, quietLog())
	r.SetBatching(2, func(_ context.Context, d time.Duration) bool {
		pauses = append(pauses, d)
		clock.Advance(d)
		if len(pauses) == 2 {
			held = false // lost while pausing
		}
		return true
	})
	if !r.Step(ctx) {
		t.Fatal("no pass on the lease holder")
	}
	if n := countLeft(t, s, old); n != 3 {
		t.Errorf("%d jobs left after a pass that lost the lease after two batches of 2, want 3", n)
	}
	for _, d := range pauses {
		if d < dispatch.RetainPause {
			t.Errorf("pause of %s between batches, want at least %s", d, dispatch.RetainPause)
		}
	}

	held = true
	clock.Advance(dispatch.RetainInterval(time.Hour))
	if !r.Step(ctx) {
		t.Fatal("no pass after the interval")
	}
	if n := countLeft(t, s, old); n != 0 {
		t.Errorf("%d jobs left after the next pass, want 0", n)
	}
}

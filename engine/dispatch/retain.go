package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Retention on the lease holder: one node, never two, deletes old jobs, so
// the work is done once and nodes do not contend for the same rows.
const (
	// MinRetain is the shortest retention: a job's result and log stay
	// readable at least this long after it ended.
	MinRetain = time.Minute
	// RetainCheck is how often a candidate looks whether a pass is due
	// and it holds the lease; the check itself costs nothing.
	RetainCheck = 10 * time.Second
	// RetainBatch is how many jobs a pass removes per transaction: small,
	// so a round waiting for the store never waits long.
	RetainBatch = 200
	// RetainPause is the least pause between two batches of a pass. The
	// pause is at least as long as the batch took, so a pass takes at most
	// half of the store's time however big the backlog.
	RetainPause = 100 * time.Millisecond
)

// RetainInterval is the time between two passes for a retention: a tenth
// of it, at least a minute and at most ten, so jobs outlive the retention
// by no more than a tenth of it (ten minutes for long ones).
func RetainInterval(retain time.Duration) time.Duration {
	return min(max(retain/10, time.Minute), 10*time.Minute)
}

// Retainer removes the ended jobs older than a retention, a pass every
// RetainInterval, while its node holds the dispatcher lease.
type Retainer struct {
	store   engine.PruneStore
	retain  time.Duration
	trusted func() bool // whether the node holds the lease now
	clock   engine.Clock
	log     *slog.Logger

	batch int
	pause time.Duration
	// sleep waits between batches; false when ctx ended first.
	sleep func(ctx context.Context, d time.Duration) bool

	next time.Time // when the next pass is due; zero: at once
}

// NewRetainer returns a retainer that prunes jobs ended more than retain
// ago while trusted says the lease is held (LeaseHolder.Trusted).
func NewRetainer(store engine.PruneStore, retain time.Duration, trusted func() bool, clock engine.Clock, log *slog.Logger) *Retainer {
	return &Retainer{
		store: store, retain: retain, trusted: trusted, clock: clock, log: log,
		batch: RetainBatch, pause: RetainPause, sleep: sleepCtx,
	}
}

// Step runs a pass if one is due and the lease is held, and reports
// whether it did. The first pass comes as soon as the lease is held; a
// pass stops between batches once the lease is no longer trusted, and the
// next one, on whichever node then holds the lease, takes up the rest.
func (r *Retainer) Step(ctx context.Context) bool {
	now := r.clock.Now()
	if now.Before(r.next) || !r.trusted() {
		return false
	}
	r.next = now.Add(RetainInterval(r.retain))
	batchStart := now
	res, err := engine.Prune(ctx, r.store, engine.PruneParams{
		OlderThan: r.retain,
		Batch:     r.batch,
		Between: func(ctx context.Context) bool {
			if !r.sleep(ctx, max(r.pause, r.clock.Now().Sub(batchStart))) {
				return false
			}
			batchStart = r.clock.Now()
			return r.trusted()
		},
	})
	switch {
	case err != nil && ctx.Err() == nil:
		r.log.Warn("pruning ended jobs failed", "err", err, "removed", res.Removed, "retain", r.retain)
	case err == nil:
		r.log.Info("pruned ended jobs", "removed", res.Removed, "events_removed", res.EventsRemoved, "retain", r.retain,
			"finished_before", res.Cutoff, "complete", !res.Stopped)
	}
	return true
}

// sleepCtx waits d unless ctx ends first; false when it did.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

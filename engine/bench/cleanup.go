package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Limits of the clean-up after a run.
const (
	// settleTimeout bounds bringing the run to rest (cancelling what is
	// queued, stopping the nodes), so an interrupted run whose database
	// went away still ends.
	settleTimeout = 2 * time.Minute
	// restTimeout is how long the cluster's nodes get to finish the
	// benchmark's jobs they run when a --cluster run ends.
	restTimeout = 30 * time.Second
	// cleanupBatch is how many jobs one cancel takes, and how many ids one
	// purge spans on SQLite: one statement that holds SQLite's one write
	// lock only briefly while nodes still work. A purge on a server spans
	// purgeSpan ids.
	cleanupBatch = 1000
	purgeSpan    = 5000
	// stepTimeout bounds one step of the removal (a span of ids, a node):
	// the removal as a whole takes as long as its steps, however many
	// jobs the run made, and a database that stops answering ends it.
	stepTimeout = time.Minute
	// cleanupAttempts is how often a failing clean-up step is tried.
	cleanupAttempts = 3
)

// settle brings the run's jobs to rest: what is queued is cancelled, the
// benchmark's nodes stop (or the cluster's finish what they run), and what
// a node shutdown put back is cancelled too. It runs once, on its own
// context: it is also what follows an interrupt.
func (r *run) settle() {
	if r.settled {
		return
	}
	r.settled = true
	r.report(PhaseCleaningUp)
	if r.allEnded() {
		// Nothing waits and no node holds a job of the run: each pass
		// below would only read the queue, about a second after a burn-down
		// of a million jobs, whose index entries no vacuum has removed yet.
		if r.fleet != nil {
			r.fleet.shutdown()
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	// Cancelling first keeps the nodes from taking more while they stop.
	// Should it fail (a database too busy to answer in time), the second
	// pass below, after the nodes have stopped, catches what is left.
	_ = r.cancelWaiting(ctx, engine.QueuedLikeStatuses)
	if r.fleet != nil {
		r.fleet.shutdown()
	} else {
		r.noteCleanup(r.awaitRest(ctx))
	}
	// Also what a stopped node left behind: put back to RESTART.
	r.noteCleanup(retry(ctx, func() error { return r.cancelWaiting(ctx, engine.QueuedLikeStatuses) }))
}

// allEnded reports whether the last look found every job of the run ended
// and none was inserted since, as a burn-down's last look does. Only a look
// sets counted. An ended job stays ended: only an operator's requeue would
// bring it back.
func (r *run) allEnded() bool {
	return r.counted > 0 && r.active == 0 && r.counted == r.feeder.inserted
}

// cleanUp settles the run, then deletes its jobs (unless Keep) and its
// nodes' rows.
func (r *run) cleanUp() error {
	r.settle()
	if !r.cfg.Keep {
		if err := r.purge(); err != nil {
			r.noteCleanup(fmt.Errorf("removing the benchmark's jobs (creator %s): %w", r.cfg.Creator, err))
		}
		// Only ended jobs can be purged: one still on a node of the
		// cluster when the rest timeout ran out stays, and the run says so.
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		left, err := r.store.JobCountByStatus(ctx, r.own(engine.JobListParams{}))
		cancel()
		if n := total(left); err == nil && n > 0 {
			r.noteCleanup(fmt.Errorf("%d of the benchmark's jobs (creator %s) had not ended and were left in the database (%s)",
				n, r.cfg.Creator, countsText(left)))
		}
	}
	if r.fleet != nil {
		for _, name := range r.fleet.names {
			err := step(func(ctx context.Context) error {
				n, err := r.store.NodeGet(ctx, name)
				if err == nil {
					_, err = engine.RemoveNode(ctx, r.store, engine.RemoveNodeParams{Name: name, StaleAfter: n.GoneAfter(),
						Event: engine.EventAppendParams{Verb: engine.EventNodesRm, Detail: "benchmark node"}}, engine.Actor{Who: r.cfg.Creator})
				}
				if errors.Is(err, engine.ErrNotFound) {
					return nil
				}
				return err
			})
			if err != nil {
				r.noteCleanup(fmt.Errorf("removing benchmark node %s: %w", name, err))
			}
		}
	}
	return r.cleanupErr
}

// purge removes the run's ended jobs, one span of their ids at a time:
// each span is read through the primary key, so the removal costs the
// same per job however large the table, and a step of it that fails is
// tried again on its own.
func (r *run) purge() error {
	ids := r.feeder.ids
	if ids.empty() {
		return nil
	}
	span := int64(purgeSpan)
	if r.store.Dialect() == "sqlite" {
		span = cleanupBatch
	}
	for from := ids.first; from <= ids.last; from += span {
		to := min(from+span-1, ids.last)
		err := step(func(ctx context.Context) error {
			res, err := engine.PurgeJobs(ctx, r.store, engine.JobPurgeParams{Creator: r.cfg.Creator, MinID: from, MaxID: to})
			r.removed += res.Removed
			return err
		})
		if err != nil {
			return err
		}
		r.report(PhaseCleaningUp)
	}
	return nil
}

// own narrows p to the run's own jobs: its creator, and the ids it was
// given, which the primary key finds however many other jobs the table
// holds.
func (r *run) own(p engine.JobListParams) engine.JobListParams {
	p.Creator = r.cfg.Creator
	if !r.feeder.ids.empty() {
		p.MinID, p.MaxID = r.feeder.ids.first, r.feeder.ids.last
	}
	return p
}

// step runs one step of the removal, with its own time limit, up to
// cleanupAttempts times.
func step(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupAttempts*(stepTimeout+time.Second))
	defer cancel()
	return retry(ctx, func() error {
		ctx, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		return f(ctx)
	})
}

// retry runs a clean-up step up to cleanupAttempts times, a second apart,
// until it succeeds: a database busy with other work (SQLite's one writer)
// can refuse a step once and take it the next time.
func retry(ctx context.Context, step func() error) error {
	var err error
	for attempt := 1; attempt <= cleanupAttempts; attempt++ {
		if err = step(); err == nil || ctx.Err() != nil || attempt == cleanupAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	return err
}

// noteCleanup keeps the first error of the clean-up, which goes on anyway.
func (r *run) noteCleanup(err error) {
	if err != nil && r.cleanupErr == nil {
		r.cleanupErr = err
	}
}

// cancelWaiting cancels the run's jobs in the given states a batch at a
// time, until none is left or none of a batch could be cancelled (they
// moved on meanwhile: a node has them).
func (r *run) cancelWaiting(ctx context.Context, statuses []engine.Status) error {
	for {
		jobs, err := r.store.JobList(ctx, r.own(engine.JobListParams{Statuses: statuses, Limit: cleanupBatch}))
		if err != nil || len(jobs) == 0 {
			return err
		}
		us := make([]engine.JobUpdate, 0, len(jobs))
		for _, j := range jobs {
			if u, err := engine.CancelUpdate(j); err == nil {
				us = append(us, u)
			}
		}
		results, err := r.store.JobUpdateMany(ctx, us)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(results, func(res engine.JobUpdateResult) bool { return res.Err == nil }) {
			return nil
		}
	}
}

// awaitRest waits, up to the rest timeout, until the cluster's nodes have
// finished every benchmark job they hold.
func (r *run) awaitRest(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, restTimeout)
	defer cancel()
	tick := time.NewTicker(r.cfg.PollInterval)
	defer tick.Stop()
	for {
		if err := r.look(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // out of time: the purge removes what is left
			}
			return err
		}
		if r.active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// countsText lists counts per status in the order of the state machine:
// "RUNNING 2, CANCELLING 1".
func countsText(counts map[engine.Status]int) string {
	var parts []string
	for _, st := range engine.AllStatuses {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, n))
		}
	}
	return strings.Join(parts, ", ")
}

// total is the sum of counts per status.
func total(counts map[engine.Status]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// DueLimit is how many due schedules one Fire takes on.
const DueLimit = 100

// FireStore is what a Firer needs: the schedules, the node rows that give
// service defaults, and the transaction that creates a fire's job and
// moves its schedule on.
type FireStore interface {
	engine.Transactor
	Now(ctx context.Context) (time.Time, error)
	NodeList(ctx context.Context) ([]*engine.Node, error)
	ScheduleList(ctx context.Context) ([]*engine.Schedule, error)
	ScheduleListDue(ctx context.Context, p engine.ScheduleDueParams) ([]*engine.Schedule, error)
}

// Firer fires due schedules. Run it only on the lease holder; should two
// holders overlap for a moment, the guarded move of the fire time still
// lets one job through per fire.
type Firer struct {
	store FireStore
	log   *slog.Logger
}

// NewFirer returns a firer on store.
func NewFirer(store FireStore, log *slog.Logger) *Firer {
	return &Firer{store: store, log: log}
}

// FireStats count what one Fire did.
type FireStats struct {
	Fired   int // jobs created
	Skipped int // fires passed over: the last job had not ended (overlap skip)
	Lost    int // fires another holder made first, or of schedules paused or removed meanwhile
}

// errLost ends a fire's transaction that found the fire already made.
var errLost = errors.New("fire made elsewhere")

// Fire fires every due schedule, each in a transaction of its own: read
// it again, create its job (or pass over the fire, for overlap skip while
// its last job has not ended), and move its next fire time on, guarded by
// the time it read. trusted is asked before each fire; Fire stops once it
// says no. A schedule whose fire fails is logged and left due; the others
// still fire.
func (f *Firer) Fire(ctx context.Context, trusted func() bool) (FireStats, error) {
	var stats FireStats
	due, err := f.store.ScheduleListDue(ctx, engine.ScheduleDueParams{Limit: DueLimit})
	if err != nil || len(due) == 0 {
		return stats, err
	}
	nodes, err := f.store.NodeList(ctx)
	if err != nil {
		return stats, err
	}
	var errs []error
	for _, sc := range due {
		if trusted != nil && !trusted() {
			break
		}
		switch err := f.fire(ctx, nodes, sc, &stats); {
		case err == nil:
		case errors.Is(err, errLost), errors.Is(err, engine.ErrConflict):
			stats.Lost++
			f.log.Debug("schedule fired elsewhere", "schedule", sc.Name, "at", sc.NextFireAt)
		case ctx.Err() != nil:
			return stats, ctx.Err()
		default:
			f.log.Warn("schedule did not fire", "schedule", sc.Name, "err", err)
			errs = append(errs, fmt.Errorf("schedule %s: %w", sc.Name, err))
		}
	}
	return stats, errors.Join(errs...)
}

// fire makes the fire of sc at sc.NextFireAt in one transaction.
func (f *Firer) fire(ctx context.Context, nodes []*engine.Node, listed *engine.Schedule, stats *FireStats) error {
	var job, running *engine.Job
	var next time.Time
	err := f.store.Tx(ctx, func(tx engine.TxStore) error {
		job, running = nil, nil // the transaction may be run again
		sc, err := tx.ScheduleGet(ctx, listed.Name)
		if errors.Is(err, engine.ErrNotFound) {
			return errLost
		}
		if err != nil {
			return err
		}
		if sc.Paused || !sc.NextFireAt.Equal(listed.NextFireAt) {
			return errLost
		}
		spec, err := Parse(sc.Cron, sc.TZ)
		if err != nil {
			return err
		}
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		if sc.NextFireAt.After(now) {
			return errLost
		}
		if sc.Overlap == engine.OverlapSkip && sc.LastJobID != nil {
			last, err := tx.JobGet(ctx, *sc.LastJobID)
			switch {
			case err == nil && !last.Status.Terminal():
				running, next = last, spec.Next(now)
				_, err := tx.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: sc.Name, From: sc.NextFireAt, Next: next})
				return err
			case err != nil && !errors.Is(err, engine.ErrNotFound):
				return err
			}
		}
		sub, err := engine.Submit(ctx, tx, nodes, sc.Job.Request(sc.JobCreator()))
		if err != nil {
			return err
		}
		// From the job's own creation time, not the fire time: however
		// late this fire, the next is after it, so fires missed while no
		// node held the lease become this one job.
		job, next = sub.Job, spec.Next(sub.Job.CreatedAt)
		_, err = tx.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{
			Name: sc.Name, From: sc.NextFireAt, Next: next, LastJobID: &sub.Job.ID})
		return err
	})
	if err != nil {
		return err
	}
	if running != nil {
		stats.Skipped++
		f.log.Info("schedule passed over a fire: its last job has not ended", "schedule", listed.Name,
			"job", running.ID, "status", running.Status, "next", next)
		return nil
	}
	stats.Fired++
	f.log.Info("schedule fired", "schedule", listed.Name, "job", job.ID, "next", next)
	return nil
}

// Wait is how long until the next fire of any schedule not paused, on the
// database clock: 0 when one is due, and ok false when none is set to fire.
func (f *Firer) Wait(ctx context.Context) (wait time.Duration, ok bool, err error) {
	all, err := f.store.ScheduleList(ctx)
	if err != nil {
		return 0, false, err
	}
	var first time.Time
	for _, sc := range all {
		if !sc.Paused && (first.IsZero() || sc.NextFireAt.Before(first)) {
			first = sc.NextFireAt
		}
	}
	if first.IsZero() {
		return 0, false, nil
	}
	now, err := f.store.Now(ctx)
	if err != nil {
		return 0, false, err
	}
	return max(first.Sub(now), 0), true, nil
}

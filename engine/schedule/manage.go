package schedule

import (
	"context"

	"github.com/jobctl/jobctl/engine"
)

// Add checks a new schedule and stores it; its first fire is the first
// time the expression names after now on the database clock (p.NextFireAt
// is ignored).
func Add(ctx context.Context, store engine.TxStore, p engine.ScheduleAddParams) (*engine.Schedule, error) {
	spec, err := Parse(p.Cron, p.TZ)
	if err != nil {
		return nil, err
	}
	now, err := store.Now(ctx)
	if err != nil {
		return nil, err
	}
	p.NextFireAt = spec.Next(now)
	return store.ScheduleAdd(ctx, p)
}

// Pause keeps a schedule from firing until Resume.
func Pause(ctx context.Context, store engine.TxStore, name string) (*engine.Schedule, error) {
	return store.ScheduleSetPaused(ctx, engine.ScheduleSetPausedParams{Name: name, Paused: true})
}

// Resume lets a paused schedule fire again, from the first time its
// expression names after now: the fires that fell in the pause are not
// made up. A schedule that is not paused is left as it is.
func Resume(ctx context.Context, store engine.TxStore, name string) (*engine.Schedule, error) {
	sc, err := store.ScheduleGet(ctx, name)
	if err != nil || !sc.Paused {
		return sc, err
	}
	spec, err := Parse(sc.Cron, sc.TZ)
	if err != nil {
		return nil, err
	}
	now, err := store.Now(ctx)
	if err != nil {
		return nil, err
	}
	return store.ScheduleSetPaused(ctx, engine.ScheduleSetPausedParams{Name: name, Paused: false, NextFireAt: spec.Next(now)})
}

package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// cloneSchedule is a deep copy: the caller may change any part of it.
func cloneSchedule(sc *engine.Schedule) *engine.Schedule {
	c := *sc
	c.Job.Args = slices.Clone(sc.Job.Args)
	if c.Job.Args == nil {
		c.Job.Args = []string{}
	}
	c.Job.Payload = slices.Clone(sc.Job.Payload)
	c.Job.Load = clonePtr(sc.Job.Load)
	c.Job.Timeout = clonePtr(sc.Job.Timeout)
	c.LastJobID = clonePtr(sc.LastJobID)
	return &c
}

func scheduleNotFound(name string) error {
	return &engine.NotFoundError{What: "schedule", ID: name}
}

// setSchedule stores sc under its name (nil removes it) and logs the undo.
func (tx *txStore) setSchedule(name string, sc *engine.Schedule) {
	s := tx.s
	if s.schedules == nil {
		s.schedules = map[string]*engine.Schedule{}
	}
	prev, had := s.schedules[name]
	if sc == nil {
		delete(s.schedules, name)
	} else {
		s.schedules[name] = sc
	}
	tx.onUndo(func() {
		if had {
			s.schedules[name] = prev
		} else {
			delete(s.schedules, name)
		}
	})
}

// ScheduleAdd stores a new schedule; see engine.TxStore.
func (s *Store) ScheduleAdd(ctx context.Context, p engine.ScheduleAddParams) (*engine.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleAdd(ctx, p)
}

// ScheduleList returns every schedule ordered by name.
func (s *Store) ScheduleList(ctx context.Context) ([]*engine.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleList(ctx)
}

// ScheduleGet returns a *NotFoundError for an unknown name.
func (s *Store) ScheduleGet(ctx context.Context, name string) (*engine.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleGet(ctx, name)
}

// ScheduleSetPaused pauses or resumes a schedule.
func (s *Store) ScheduleSetPaused(ctx context.Context, p engine.ScheduleSetPausedParams) (*engine.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleSetPaused(ctx, p)
}

// ScheduleDelete removes a schedule.
func (s *Store) ScheduleDelete(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleDelete(ctx, name)
}

// ScheduleListDue returns the schedules due on the store's clock.
func (s *Store) ScheduleListDue(ctx context.Context, p engine.ScheduleDueParams) ([]*engine.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleListDue(ctx, p)
}

// ScheduleAdvance moves a schedule past the fire at p.From, guarded by it.
func (s *Store) ScheduleAdvance(ctx context.Context, p engine.ScheduleAdvanceParams) (*engine.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ScheduleAdvance(ctx, p)
}

// ScheduleAdd stores a new schedule; ErrConflict when the name is taken.
func (tx *txStore) ScheduleAdd(_ context.Context, p engine.ScheduleAddParams) (*engine.Schedule, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	if err := engine.ValidateScheduleAdd(p); err != nil {
		return nil, err
	}
	if _, ok := tx.s.schedules[p.Name]; ok {
		return nil, &engine.ScheduleExistsError{Name: p.Name}
	}
	now := tx.s.now()
	sc := &engine.Schedule{
		Name: p.Name, Cron: p.Cron, TZ: p.TZ, Overlap: p.Overlap, Paused: p.Paused, Job: p.Job,
		NextFireAt: p.NextFireAt.UTC(), Creator: p.Creator, CreatedAt: now, UpdatedAt: now,
	}
	if strings.TrimSpace(string(sc.Job.Payload)) == "" {
		sc.Job.Payload = json.RawMessage("{}")
	}
	sc = cloneSchedule(sc)
	tx.setSchedule(p.Name, sc)
	return cloneSchedule(sc), nil
}

// ScheduleList returns every schedule ordered by name.
func (tx *txStore) ScheduleList(context.Context) ([]*engine.Schedule, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	out := make([]*engine.Schedule, 0, len(tx.s.schedules))
	for _, sc := range tx.s.schedules {
		out = append(out, cloneSchedule(sc))
	}
	slices.SortFunc(out, func(a, b *engine.Schedule) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ScheduleGet returns a *NotFoundError for an unknown name.
func (tx *txStore) ScheduleGet(_ context.Context, name string) (*engine.Schedule, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	sc, ok := tx.s.schedules[name]
	if !ok {
		return nil, scheduleNotFound(name)
	}
	return cloneSchedule(sc), nil
}

// ScheduleSetPaused pauses or resumes a schedule; a non-zero NextFireAt
// becomes its next fire time.
func (tx *txStore) ScheduleSetPaused(_ context.Context, p engine.ScheduleSetPausedParams) (*engine.Schedule, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	sc, ok := tx.s.schedules[p.Name]
	if !ok {
		verb := "resume"
		if p.Paused {
			verb = "pause"
		}
		return nil, fmt.Errorf("%s schedule %s: %w", verb, p.Name, scheduleNotFound(p.Name))
	}
	c := cloneSchedule(sc)
	c.Paused = p.Paused
	if !p.NextFireAt.IsZero() {
		c.NextFireAt = p.NextFireAt.UTC()
	}
	c.UpdatedAt = tx.s.now()
	tx.setSchedule(p.Name, c)
	return cloneSchedule(c), nil
}

// ScheduleDelete removes a schedule; *NotFoundError for an unknown name.
func (tx *txStore) ScheduleDelete(_ context.Context, name string) error {
	if err := tx.check(); err != nil {
		return err
	}
	if _, ok := tx.s.schedules[name]; !ok {
		return scheduleNotFound(name)
	}
	tx.setSchedule(name, nil)
	return nil
}

// ScheduleListDue returns the schedules not paused whose next fire time
// has come on the store's clock, earliest first.
func (tx *txStore) ScheduleListDue(_ context.Context, p engine.ScheduleDueParams) ([]*engine.Schedule, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	now := tx.s.now()
	var out []*engine.Schedule
	for _, sc := range tx.s.schedules {
		if !sc.Paused && !sc.NextFireAt.After(now) {
			out = append(out, cloneSchedule(sc))
		}
	}
	slices.SortFunc(out, func(a, b *engine.Schedule) int {
		return cmp.Or(a.NextFireAt.Compare(b.NextFireAt), strings.Compare(a.Name, b.Name))
	})
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

// ScheduleAdvance moves a schedule past the fire at p.From; ErrConflict
// when it no longer fires then, is paused or is gone.
func (tx *txStore) ScheduleAdvance(_ context.Context, p engine.ScheduleAdvanceParams) (*engine.Schedule, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	sc, ok := tx.s.schedules[p.Name]
	if !ok || sc.Paused || !sc.NextFireAt.Equal(p.From) {
		return nil, fmt.Errorf("advance schedule %s: it no longer fires at %s: %w",
			p.Name, p.From.UTC().Format(time.RFC3339Nano), engine.ErrConflict)
	}
	c := cloneSchedule(sc)
	c.NextFireAt = p.Next.UTC()
	if p.LastJobID != nil {
		c.LastJobID = clonePtr(p.LastJobID)
	}
	c.UpdatedAt = tx.s.now()
	tx.setSchedule(p.Name, c)
	return cloneSchedule(c), nil
}

package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// eventLog holds the events in id order, with the ids of each job's.
type eventLog struct {
	byID   map[int64]engine.Event
	order  *idSet
	byJob  map[int64][]int64
	nextID int64
}

func (l *eventLog) add(e engine.Event) {
	if l.byID == nil {
		l.byID, l.order, l.byJob = map[int64]engine.Event{}, newIDSet(), map[int64][]int64{}
	}
	l.byID[e.ID] = e
	l.order.ReplaceOrInsert(e.ID)
	if e.JobID != nil {
		l.byJob[*e.JobID] = append(l.byJob[*e.JobID], e.ID)
	}
}

func (l *eventLog) remove(id int64) {
	e, ok := l.byID[id]
	if !ok {
		return
	}
	delete(l.byID, id)
	l.order.Delete(id)
	if e.JobID != nil {
		ids := slices.DeleteFunc(l.byJob[*e.JobID], func(x int64) bool { return x == id })
		if len(ids) == 0 {
			delete(l.byJob, *e.JobID)
		} else {
			l.byJob[*e.JobID] = ids
		}
	}
}

// dropJob removes the events of a job that is gone.
func (l *eventLog) dropJob(jobID int64) {
	for _, id := range slices.Clone(l.byJob[jobID]) {
		l.remove(id)
	}
}

// EventAppend records the events of one change; see engine.TxStore.
func (s *Store) EventAppend(ctx context.Context, p engine.EventAppendParams) error {
	return s.Tx(ctx, func(tx engine.TxStore) error { return tx.EventAppend(ctx, p) })
}

// EventList returns the matching events oldest first; see engine.TxStore.
func (s *Store) EventList(ctx context.Context, p engine.EventListParams) ([]engine.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.EventList(ctx, p)
}

// EventAppend records the events of one change, each job's with its type.
// A job that does not exist is a *NotFoundError before anything is added.
func (tx *txStore) EventAppend(_ context.Context, p engine.EventAppendParams) error {
	if err := tx.check(); err != nil {
		return err
	}
	if err := engine.ValidateEventAppend(p); err != nil {
		return err
	}
	s := tx.s
	ids := slices.Compact(slices.Sorted(slices.Values(p.JobIDs)))
	for _, id := range ids {
		if s.jobs.byID[id] == nil {
			return fmt.Errorf("record event %s: %w", p.Verb, jobNotFound(id))
		}
	}
	e := engine.Event{At: s.now(), Who: p.Who, Verb: p.Verb, Node: p.Node, Type: p.Type, Schedule: p.Schedule,
		Detail: p.Detail, Reason: p.Reason}
	add := func(e engine.Event) {
		s.events.nextID++
		e.ID = s.events.nextID
		s.events.add(e)
		tx.onUndo(func() { s.events.remove(e.ID) })
	}
	if len(ids) == 0 {
		add(e)
		return nil
	}
	for _, id := range ids {
		e.JobID, e.Type = engine.Ptr(id), s.jobs.byID[id].Type
		add(e)
	}
	return nil
}

// EventList returns the matching events oldest first; with Limit, the
// newest Limit of them.
func (tx *txStore) EventList(_ context.Context, p engine.EventListParams) ([]engine.Event, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	l := &tx.s.events
	match := func(e engine.Event) bool {
		return e.ID > p.AfterID && (p.Node == "" || e.Node == p.Node) && (p.Since == nil || !e.At.Before(*p.Since))
	}
	out := []engine.Event{}
	take := func(id int64) bool {
		if e := l.byID[id]; match(e) {
			e.JobID = clonePtr(e.JobID)
			out = append(out, e)
		}
		return p.Limit <= 0 || len(out) < p.Limit
	}
	switch {
	case p.JobID != nil:
		ids := l.byJob[*p.JobID]
		for i := len(ids) - 1; i >= 0 && take(ids[i]); i-- {
		}
	case l.order != nil:
		l.order.Descend(take)
	}
	slices.Reverse(out)
	return out, nil
}

// EventPurge removes old events naming no job; see engine.Store.
func (s *Store) EventPurge(_ context.Context, p engine.EventPurgeParams) (int, error) {
	if p.Limit < 0 {
		return 0, &engine.InvalidError{What: "event purge", Problems: []string{fmt.Sprintf("limit %d is negative", p.Limit)}}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.events
	if l.order == nil {
		return 0, nil
	}
	var doomed []int64
	l.order.Ascend(func(id int64) bool {
		if e := l.byID[id]; e.JobID == nil && e.At.Before(p.Before) {
			doomed = append(doomed, id)
		}
		return p.Limit <= 0 || len(doomed) < p.Limit
	})
	if !p.DryRun {
		for _, id := range doomed {
			l.remove(id)
		}
	}
	return len(doomed), nil
}

package memstore

import (
	"context"
	"errors"

	"github.com/jobctl/jobctl/engine"
)

// JobUpdateMany applies the transitions one after another under one lock,
// so the batch is as atomic here as one statement is in SQL.
func (s *Store) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engine.JobUpdateResult, len(us))
	for i, u := range us {
		if u.Priority != nil {
			out[i].Err = &engine.TransitionError{ID: u.ID, From: u.From, To: u.To, Reason: engine.ErrBatchPriority.Error()}
			continue
		}
		job, err := s.direct.JobUpdate(ctx, u)
		if errors.Is(err, engine.ErrNotFound) {
			err = engine.ErrConflict
		}
		out[i] = engine.JobUpdateResult{Job: job, Err: err}
	}
	return out, nil
}

// JobUpdateManyQuiet is JobUpdateMany without the jobs in the results.
func (s *Store) JobUpdateManyQuiet(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	out, err := s.JobUpdateMany(ctx, us)
	for i := range out {
		out[i].Job = nil
	}
	return out, err
}

// JobStartMany is JobUpdateMany with each job as it started
// (engine.Job.Started).
func (s *Store) JobStartMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	out, err := s.JobUpdateMany(ctx, us)
	for i, r := range out {
		if r.Job != nil {
			out[i].Job = r.Job.Started()
		}
	}
	return out, err
}

// JobUpdateMany applies the transitions in the transaction, one after
// another, each as JobUpdateMany outside one would.
func (tx *txStore) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	out := make([]engine.JobUpdateResult, len(us))
	for i, u := range us {
		if u.Priority != nil {
			out[i].Err = &engine.TransitionError{ID: u.ID, From: u.From, To: u.To, Reason: engine.ErrBatchPriority.Error()}
			continue
		}
		job, err := tx.JobUpdate(ctx, u)
		if errors.Is(err, engine.ErrNotFound) {
			err = engine.ErrConflict
		}
		if err != nil && !errors.Is(err, engine.ErrConflict) && !errors.Is(err, engine.ErrInvalidTransition) && !errors.Is(err, engine.ErrInvalid) {
			return nil, err
		}
		out[i] = engine.JobUpdateResult{Job: job, Err: err}
	}
	return out, nil
}

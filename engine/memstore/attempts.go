package memstore

import (
	"context"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// attemptTable holds the ended attempts of each job, oldest first: what the
// SQL store's job_attempts table holds.
type attemptTable map[int64][]engine.Attempt

// recordAttempt keeps the attempt that the transition from old to j ends,
// if it ends one (engine.EndsAttempt), as the SQL store's trigger does in
// the same statement. An attempt number recorded before is replaced, as
// the trigger's upsert replaces it.
func (tx *txStore) recordAttempt(old, j *engine.Job) {
	if !engine.EndsAttempt(old, j) {
		return
	}
	s := tx.s
	if s.attempts == nil {
		s.attempts = attemptTable{}
	}
	a := engine.EndedAttempt(old, j, s.now())
	before, had := s.attempts[j.ID]
	list := slices.Clone(before)
	if i := slices.IndexFunc(list, func(b engine.Attempt) bool { return b.Attempt == a.Attempt }); i >= 0 {
		list[i] = a
	} else {
		list = append(list, a)
		slices.SortFunc(list, func(x, y engine.Attempt) int { return x.Attempt - y.Attempt })
	}
	s.attempts[j.ID] = list
	tx.onUndo(func() {
		if had {
			s.attempts[j.ID] = before
		} else {
			delete(s.attempts, j.ID)
		}
	})
}

// JobAttemptList returns the ended attempts of a job; see engine.TxStore.
func (s *Store) JobAttemptList(ctx context.Context, jobID int64) ([]engine.Attempt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobAttemptList(ctx, jobID)
}

// JobAttemptList returns copies of the ended attempts of a job, oldest first.
func (tx *txStore) JobAttemptList(_ context.Context, jobID int64) ([]engine.Attempt, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	stored := tx.s.attempts[jobID]
	out := make([]engine.Attempt, len(stored))
	for i, a := range stored {
		out[i] = a
		out[i].StartedAt = clonePtr(a.StartedAt)
		out[i].EndedAt = clonePtr(a.EndedAt)
		out[i].ExitCode = clonePtr(a.ExitCode)
	}
	return out, nil
}

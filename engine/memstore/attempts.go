package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// attemptTable holds the ended attempts of each job, oldest first: what the
// SQL store's job_attempts table holds with the final attempts its ended
// jobs keep on their rows.
type attemptTable map[int64][]engine.Attempt

// recordAttempt keeps the attempt that the transition from old to j ends,
// if it ends one (engine.EndsAttempt), as the SQL store's trigger does in
// the same statement. An attempt number recorded before is replaced, as
// the trigger's upsert replaces it. A transition that takes the late
// result of an attempt a recovery ended (engine.TakesLateResult) rewrites
// that attempt's record with it, as the triggers of migration 017 do.
func (tx *txStore) recordAttempt(old, j *engine.Job) {
	var a engine.Attempt
	switch {
	case engine.EndsAttempt(old, j):
		a = engine.EndedAttempt(old, j, tx.s.now())
	case engine.TakesLateResult(old, j):
		i := slices.IndexFunc(tx.s.attempts[j.ID], func(b engine.Attempt) bool { return b.Attempt == j.Attempt })
		if i < 0 {
			return
		}
		a = engine.LateAttempt(tx.s.attempts[j.ID][i], j, tx.s.now())
	default:
		return
	}
	s := tx.s
	if s.attempts == nil {
		s.attempts = attemptTable{}
	}
	before, had := s.attempts[j.ID]
	list := slices.Clone(before)
	if i := slices.IndexFunc(list, func(b engine.Attempt) bool { return b.Attempt == a.Attempt }); i >= 0 {
		list[i] = a
	} else {
		list = append(list, a)
		slices.SortFunc(list, func(x, y engine.Attempt) int { return x.Attempt - y.Attempt })
	}
	s.attempts[j.ID] = list
	if !tx.logging {
		return
	}
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
		out[i].Usage = clonePtr(a.Usage)
	}
	return out, nil
}

// JobAttemptUsageList returns the newest measured attempts of each type;
// see engine.Store. Each attempt's type and load are its job's, as the SQL
// store's trigger copies them when the attempt ends: a job's type and
// load never change.
func (s *Store) JobAttemptUsageList(_ context.Context, p engine.JobAttemptUsageParams) ([]engine.AttemptUsage, error) {
	if p.Runs < 1 {
		return nil, fmt.Errorf("list attempt usage: runs %d is not at least 1", p.Runs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byType := map[string][]engine.AttemptUsage{}
	for id, list := range s.attempts {
		j := s.jobs.byID[id]
		if j == nil || (len(p.Types) > 0 && !slices.Contains(p.Types, j.Type)) {
			continue
		}
		for _, a := range list {
			if a.Usage == nil {
				continue
			}
			byType[j.Type] = append(byType[j.Type], engine.AttemptUsage{JobID: id, Attempt: a.Attempt, Type: j.Type,
				Load: j.Load, EndedAt: *a.EndedAt, Usage: *a.Usage})
		}
	}
	var out []engine.AttemptUsage
	for _, list := range byType {
		// Newest first, as the SQL store's window orders them.
		slices.SortFunc(list, func(a, b engine.AttemptUsage) int {
			return cmp.Or(b.EndedAt.Compare(a.EndedAt), cmp.Compare(b.JobID, a.JobID), cmp.Compare(b.Attempt, a.Attempt))
		})
		out = append(out, list[:min(len(list), p.Runs)]...)
	}
	return out, nil
}

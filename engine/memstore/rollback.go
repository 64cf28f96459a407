package memstore

import (
	"context"
	"fmt"

	"github.com/jobctl/jobctl/engine"
)

// JobListRollbackPending returns the failed jobs awaiting their rollback
// job, oldest first; see engine.TxStore.
func (s *Store) JobListRollbackPending(ctx context.Context, limit int) ([]*engine.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobListRollbackPending(ctx, limit)
}

// JobRollbackSet records a failed job's rollback job; see engine.TxStore.
func (s *Store) JobRollbackSet(ctx context.Context, p engine.JobRollbackSetParams) (*engine.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobRollbackSet(ctx, p)
}

// JobListRollbackPending reads the FAILED jobs, which the status index
// holds in id order.
func (tx *txStore) JobListRollbackPending(_ context.Context, limit int) ([]*engine.Job, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	var out []*engine.Job
	if failed := tx.s.jobs.byStatus[engine.StatusFailed]; failed != nil {
		failed.Ascend(func(id int64) bool {
			if j := tx.s.jobs.byID[id]; j.RollbackPending() {
				out = append(out, tx.s.jobOut(j))
			}
			return limit <= 0 || len(out) < limit
		})
	}
	return out, nil
}

// JobRollbackSet applies the guarded record as job_rollback_set.sql does.
func (tx *txStore) JobRollbackSet(_ context.Context, p engine.JobRollbackSetParams) (*engine.Job, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	s := tx.s
	old := s.jobs.byID[p.ID]
	if old == nil {
		return nil, jobNotFound(p.ID)
	}
	if old.Status != engine.StatusFailed || old.Version != p.Version || old.RollbackJobID != nil {
		return nil, fmt.Errorf("job %d is no longer FAILED at version %d awaiting its rollback: %w", p.ID, p.Version, engine.ErrConflict)
	}
	j := *old
	j.Version++
	j.RollbackJobID = engine.Ptr(p.RollbackJobID)
	s.jobs.put(&j)
	tx.onUndo(func() { s.jobs.put(old) })
	tx.jobChanged(j.Status)
	return tx.s.jobOut(&j), nil
}

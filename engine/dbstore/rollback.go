package dbstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// JobListRollbackPending returns up to limit (0: all) jobs that failed
// finally and await their rollback job, oldest first.
func (s *Store) JobListRollbackPending(ctx context.Context, limit int) ([]*engine.Job, error) {
	jobs := []*engine.Job{}
	if err := s.selectRows(ctx, s.q, &jobs, qJobListRollbackPending, args{"limit": limitOrAll(limit)}, true); err != nil {
		return nil, fmt.Errorf("list jobs awaiting their rollback: %w", err)
	}
	return jobs, nil
}

// JobRollbackSet records a failed job's rollback job with the guarded
// UPDATE of job_rollback_set; engine.ErrConflict when the job is no longer
// FAILED at p.Version awaiting its rollback.
func (s *Store) JobRollbackSet(ctx context.Context, p engine.JobRollbackSetParams) (*engine.Job, error) {
	a := args{"id": p.ID, "version": p.Version, "rollback_job_id": p.RollbackJobID}
	var job *engine.Job
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.exec(ctx, tx, qJobRollbackSet, a)
		if err != nil {
			return err
		}
		if n == 0 {
			if err := s.jobMustExist(ctx, tx, p.ID); err != nil {
				return err
			}
			return fmt.Errorf("job %d is no longer FAILED at version %d awaiting its rollback: %w", p.ID, p.Version, engine.ErrConflict)
		}
		job, err = s.jobGet(ctx, tx, p.ID)
		return err
	})
	if err != nil {
		if isDomainError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("record the rollback of job %d: %w", p.ID, err)
	}
	s.jobChanged(job.Status)
	return job, nil
}

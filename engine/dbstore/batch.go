package dbstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// JobUpdateMany applies many guarded transitions in one transaction; see
// engine.Store.
func (s *Store) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	var out []engine.JobUpdateResult
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		out = make([]engine.JobUpdateResult, len(us))
		in := &Store{conn: s.conn, q: tx, tx: tx}
		for i, u := range us {
			job, err := in.JobUpdate(ctx, u)
			switch {
			case errors.Is(err, engine.ErrNotFound):
				err = engine.ErrConflict
			case err != nil && !isDomainError(err):
				return err
			}
			out[i] = engine.JobUpdateResult{Job: job, Err: err}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update %d jobs: %w", len(us), err)
	}
	for _, r := range out {
		if r.Err == nil {
			s.jobChanged(r.Job.Status)
		}
	}
	return out, nil
}

package dbstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// ReservationList returns every reservation, ordered by job id.
func (s *Store) ReservationList(ctx context.Context) ([]engine.Reservation, error) {
	var rows []struct {
		JobID int64  `db:"job_id"`
		Node  string `db:"node"`
	}
	if err := s.selectRows(ctx, s.withKept(s.q), &rows, qReservationList, nil, false); err != nil {
		return nil, fmt.Errorf("list reservations: %w", err)
	}
	out := make([]engine.Reservation, len(rows))
	for i, r := range rows {
		out[i] = engine.Reservation{JobID: r.JobID, Node: r.Node}
	}
	return out, nil
}

// ReservationSet keeps r.Node for job r.JobID, replacing the job's earlier
// reservation; ErrConflict when the node is kept for another job. The job
// must exist (*NotFoundError otherwise).
func (s *Store) ReservationSet(ctx context.Context, r engine.Reservation) error {
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := s.jobMustExist(ctx, tx, r.JobID); err != nil {
			return err
		}
		var holders []int64
		if err := s.selectRows(ctx, tx, &holders, qReservationNodeHolder, args{"node": r.Node}, false); err != nil {
			return err
		}
		if len(holders) > 0 { // the node column is unique: one holder at most
			if holders[0] == r.JobID {
				return nil
			}
			return fmt.Errorf("node %s is kept for job %d: %w", r.Node, holders[0], engine.ErrConflict)
		}
		if _, err := s.exec(ctx, tx, qReservationDelete, args{"job_id": r.JobID}); err != nil {
			return err
		}
		_, err := s.exec(ctx, tx, qReservationInsert, args{"job_id": r.JobID, "node": r.Node})
		return err
	})
	if err != nil {
		return fmt.Errorf("reserve node %s for job %d: %w", r.Node, r.JobID, err)
	}
	return nil
}

// ReservationDelete frees the node kept for a job.
func (s *Store) ReservationDelete(ctx context.Context, jobID int64) error {
	if _, err := s.exec(ctx, s.q, qReservationDelete, args{"job_id": jobID}); err != nil {
		return fmt.Errorf("delete reservation of job %d: %w", jobID, err)
	}
	return nil
}

package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// reservations keep one node per job and one job per node.
type reservations struct {
	byJob  map[int64]string
	byNode map[string]int64
}

func newReservations() reservations {
	return reservations{byJob: map[int64]string{}, byNode: map[string]int64{}}
}

func (r reservations) set(jobID int64, node string) {
	r.byJob[jobID], r.byNode[node] = node, jobID
}

func (r reservations) drop(jobID int64) {
	if node, ok := r.byJob[jobID]; ok {
		delete(r.byJob, jobID)
		delete(r.byNode, node)
	}
}

// ReservationList returns every reservation, ordered by job id.
func (s *Store) ReservationList(ctx context.Context) ([]engine.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ReservationList(ctx)
}

// ReservationSet keeps r.Node for job r.JobID; see engine.TxStore.
func (s *Store) ReservationSet(ctx context.Context, r engine.Reservation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ReservationSet(ctx, r)
}

// ReservationDelete frees the node kept for a job.
func (s *Store) ReservationDelete(ctx context.Context, jobID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.ReservationDelete(ctx, jobID)
}

// ReservationList returns every reservation, ordered by job id.
func (tx *txStore) ReservationList(context.Context) ([]engine.Reservation, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	out := make([]engine.Reservation, 0, len(tx.s.reserved.byJob))
	for id, node := range tx.s.reserved.byJob {
		out = append(out, engine.Reservation{JobID: id, Node: node})
	}
	slices.SortFunc(out, func(a, b engine.Reservation) int { return compareID(a.JobID, b.JobID) })
	return out, nil
}

// ReservationSet keeps r.Node for job r.JobID, replacing the job's earlier
// reservation; ErrConflict when the node is kept for another job, a
// *NotFoundError for an unknown job.
func (tx *txStore) ReservationSet(_ context.Context, r engine.Reservation) error {
	if err := tx.check(); err != nil {
		return err
	}
	s := tx.s
	if s.jobs.byID[r.JobID] == nil {
		return fmt.Errorf("reserve node %s for job %d: %w", r.Node, r.JobID, jobNotFound(r.JobID))
	}
	if holder, ok := s.reserved.byNode[r.Node]; ok {
		if holder == r.JobID {
			return nil
		}
		return fmt.Errorf("reserve node %s for job %d: node %s is kept for job %d: %w",
			r.Node, r.JobID, r.Node, holder, engine.ErrConflict)
	}
	prev, hadPrev := s.reserved.byJob[r.JobID]
	s.reserved.drop(r.JobID)
	s.reserved.set(r.JobID, r.Node)
	tx.onUndo(func() {
		s.reserved.drop(r.JobID)
		if hadPrev {
			s.reserved.set(r.JobID, prev)
		}
	})
	return nil
}

// ReservationDelete frees the node kept for a job; none is no error.
func (tx *txStore) ReservationDelete(_ context.Context, jobID int64) error {
	if err := tx.check(); err != nil {
		return err
	}
	s := tx.s
	node, ok := s.reserved.byJob[jobID]
	if !ok {
		return nil
	}
	s.reserved.drop(jobID)
	tx.onUndo(func() { s.reserved.set(jobID, node) })
	return nil
}

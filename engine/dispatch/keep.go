package dispatch

import (
	"errors"

	"github.com/jobctl/jobctl/engine"
)

// keep records the node an oversized job no node took waits for, as
// placement decides it (Placement.Keep on the job's placement in r.p), in
// the store, so the next rounds, whoever holds the lease, keep other work
// off it until it has drained. A job that keeps no node (it is not
// oversized, or can never run) loses any reservation it had.
func (r *round) keep(job *engine.Job) error {
	n := r.p.Keep(job, r.nodes, r.heldFor)
	if n == nil {
		return r.unkeep(job.ID)
	}
	had := r.keptBy[job.ID]
	if had == n.Name {
		return nil
	}
	err := r.Dispatcher.store.ReservationSet(r.ctx, engine.Reservation{JobID: job.ID, Node: n.Name})
	if errors.Is(err, engine.ErrConflict) {
		return nil // kept for another job meanwhile: try again next round
	}
	if err != nil {
		return err
	}
	if had != "" {
		delete(r.heldFor, had)
	}
	r.heldFor[n.Name], r.keptBy[job.ID] = job.ID, n.Name
	r.room.changed()
	r.log.Info("oversized job waits for a node to drain", "job", job.ID, "load", job.Load, "target", n.Name, "max_load", n.MaxLoad)
	return nil
}

// unkeep frees the node kept for a job, if any.
func (r *round) unkeep(id int64) error {
	name, ok := r.keptBy[id]
	if !ok {
		return nil
	}
	if err := r.Dispatcher.store.ReservationDelete(r.ctx, id); err != nil {
		return err
	}
	delete(r.keptBy, id)
	delete(r.heldFor, name)
	r.room.changed()
	return nil
}

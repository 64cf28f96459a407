package dispatch

import (
	"errors"

	"github.com/jobctl/jobctl/engine"
)

// keep plans the node an oversized job no node took waits for, as
// placement decides it (Placement.Keep on the job's placement in r.p): the
// round keeps other work off it from now on, and the apply step records it
// in the store (applyKeeps), so the next rounds, whoever holds the lease,
// keep other work off it until it has drained. A job that keeps no node
// (it is not oversized, or can never run) loses any reservation it had.
func (r *round) keep(job *engine.Job) {
	n := r.p.Keep(job, r.nodes, r.heldFor)
	if n == nil {
		if name, ok := r.keptBy[job.ID]; ok {
			delete(r.keptBy, job.ID)
			delete(r.heldFor, name)
			r.keeps = append(r.keeps, engine.Reservation{JobID: job.ID})
		}
		return
	}
	had := r.keptBy[job.ID]
	if had == n.Name {
		return
	}
	if had != "" {
		delete(r.heldFor, had)
	}
	r.heldFor[n.Name], r.keptBy[job.ID] = job.ID, n.Name
	r.keeps = append(r.keeps, engine.Reservation{JobID: job.ID, Node: n.Name})
	r.log.Info("oversized job waits for a node to drain", "job", job.ID, "load", job.Load, "target", n.Name, "max_load", n.MaxLoad)
}

// applyKeeps records in the store the nodes the plan kept or freed since
// the last apply. A node another holder kept for another job meanwhile is
// given up: the next round plans again.
func (r *round) applyKeeps() error {
	keeps := r.keeps
	r.keeps = nil
	for _, k := range keeps {
		if k.Node == "" {
			if err := r.Dispatcher.store.ReservationDelete(r.ctx, k.JobID); err != nil {
				return err
			}
			continue
		}
		err := r.Dispatcher.store.ReservationSet(r.ctx, k)
		if errors.Is(err, engine.ErrConflict) {
			if r.keptBy[k.JobID] == k.Node {
				delete(r.keptBy, k.JobID)
				delete(r.heldFor, k.Node)
				r.reshaped++
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unkeep frees the node kept for a job, if any, in the store at once: the
// job was taken.
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
	r.reshaped++
	return nil
}

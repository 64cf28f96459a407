package node

import (
	"context"

	"github.com/jobctl/jobctl/engine"
)

// reconcileLoop follows operator requests made in the store — cancel, pause,
// resume — for the jobs running here, and stops runs whose job was taken
// from this node (recovered elsewhere after it was thought offline). One
// query per poll covers all of the node's jobs.
func (n *Runtime) reconcileLoop(ctx context.Context) {
	every(ctx, n.cfg.PollInterval, func() {
		if err := n.reconcile(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("cannot check running jobs", "err", err)
		}
	})
}

func (n *Runtime) reconcile(ctx context.Context) error {
	// Only runs started before the query can be judged by its answer.
	n.mu.Lock()
	started := make(map[int64]*activeRun, len(n.runs))
	for id, ar := range n.runs {
		if ar.run != nil {
			started[id] = ar
		}
	}
	n.mu.Unlock()
	if len(started) == 0 {
		return nil
	}
	jobs, err := n.store.JobList(ctx, engine.JobListParams{Node: n.cfg.Name, Statuses: engine.RecoverableStatuses, Brief: true})
	if err != nil {
		return err
	}
	current := make(map[int64]*engine.Job, len(jobs))
	for _, j := range jobs {
		current[j.ID] = j
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	for id, ar := range started {
		if n.runs[id] != ar || ar.fenced || ar.shutdown || ended(ar) {
			continue // ended meanwhile, or already being stopped for good
		}
		job := current[id]
		switch {
		case job == nil || !n.owns(job, ar):
			ar.fenced = true
			n.log.Warn("job was taken from this node; stopping it", "job", id, "attempt", ar.attempt)
			ar.run.Cancel("job was taken from this node", n.cfg.CancelGrace)
		case job.Status == engine.StatusCancelling && !ar.cancelling:
			ar.cancelling = true
			n.log.Info("cancelling job", "job", id)
			ar.run.Cancel("cancelled by operator", n.cfg.CancelGrace)
		case job.Status == engine.StatusPaused && !ar.paused:
			if err := ar.run.Pause(); err != nil {
				n.log.Warn("cannot pause job", "job", id, "err", err)
				continue
			}
			ar.paused = true
			n.log.Info("paused job", "job", id)
		case job.Status == engine.StatusRunning && ar.paused:
			if err := ar.run.Resume(); err != nil {
				n.log.Warn("cannot resume job", "job", id, "err", err)
				continue
			}
			ar.paused = false
			n.log.Info("resumed job", "job", id)
		}
	}
	return nil
}

// ended reports whether the run's process is over (its result may not be
// recorded yet).
func ended(ar *activeRun) bool {
	select {
	case <-ar.run.Done():
		return true
	default:
		return false
	}
}

// recoverOrphans restarts jobs the store says run here that this node has
// no run for and no result of: nothing else would ever end them (a run
// lost without a trace, say). A job whose result waits to be recorded is
// left alone: its run stays on the books until the result is recorded or
// fenced off, and one kept on disk is checked too. A job accepted meanwhile
// is safe: its run is on the books before the job becomes RUNNING, and a
// job that ended meanwhile has a new version, so the guarded update misses.
func (n *Runtime) recoverOrphans(ctx context.Context) error {
	jobs, err := n.store.JobList(ctx, engine.JobListParams{Node: n.cfg.Name, Statuses: engine.NodeOwnedStatuses})
	if err != nil {
		return err
	}
	var orphans []*engine.Job
	for _, job := range jobs {
		if !n.books.Holds(job.ID) && !n.completions.spool.holds(job.ID) {
			orphans = append(orphans, job)
		}
	}
	return n.recoverJobs(ctx, orphans, "node "+n.cfg.Name+" lost track of the run", "recovered a job this node no longer runs")
}

// owns reports whether the job, as stored, is still the run ar: this node,
// this attempt, started and not ended. A job recovered and offered anew —
// even to this node — is back in the queue with the same attempt number
// until it starts again, and is no longer ar's.
func (n *Runtime) owns(job *engine.Job, ar *activeRun) bool {
	return job.Node == n.cfg.Name && job.Attempt == ar.attempt && job.Status.NodeOwned()
}

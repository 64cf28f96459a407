package node

import (
	"context"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// reconcileLoop follows operator requests made in the store — cancel, pause,
// resume — for the jobs running here, and stops runs whose job was taken
// from this node (recovered elsewhere after it was thought offline). One
// query per poll covers all of the node's jobs.
func (r *jobRunner) reconcileLoop(ctx context.Context) {
	every(ctx, r.cfg.PollInterval, func() {
		if err := r.reconcile(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("cannot check running jobs", "err", err)
		}
	})
}

func (r *jobRunner) reconcile(ctx context.Context) error {
	// Only runs started before the query can be judged by its answer.
	r.mu.Lock()
	started := make(map[int64]*activeRun, len(r.runs))
	for id, ar := range r.runs {
		if ar.run != nil {
			started[id] = ar
		}
	}
	r.mu.Unlock()
	if len(started) == 0 {
		return nil
	}
	jobs, err := r.store.JobList(ctx, engine.JobListParams{Node: r.cfg.Name, Statuses: engine.RecoverableStatuses, Brief: true})
	if err != nil {
		return err
	}
	current := make(map[int64]*engine.Job, len(jobs))
	for _, j := range jobs {
		current[j.ID] = j
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	for id, ar := range started {
		if r.runs[id] != ar || ar.fenced || ar.shutdown || ended(ar) {
			continue // ended meanwhile, or already being stopped for good
		}
		job := current[id]
		switch {
		case job == nil || !owns(r.cfg.Name, job, ar):
			ar.fenced = true
			r.log.Warn("job was taken from this node; stopping it", "job", id, "attempt", ar.attempt)
			ar.run.Cancel("job was taken from this node", r.cfg.CancelGrace)
		case job.Status == engine.StatusCancelling && !ar.cancelling:
			ar.cancelling = true
			r.log.Info("cancelling job", "job", id)
			ar.run.Cancel("cancelled by operator", r.cfg.CancelGrace)
		case job.Status == engine.StatusPaused && !ar.paused:
			if err := ar.run.Pause(); err != nil {
				r.log.Warn("cannot pause job", "job", id, "err", err)
				continue
			}
			ar.paused = true
			r.log.Info("paused job", "job", id)
		case job.Status == engine.StatusRunning && ar.paused:
			if err := ar.run.Resume(); err != nil {
				r.log.Warn("cannot resume job", "job", id, "err", err)
				continue
			}
			ar.paused = false
			r.log.Info("resumed job", "job", id)
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
//
// A run held when the check began is no orphan either: the listing may
// have been read before its result was recorded, and the run may have left
// the books since. On a busy node many runs end while the listing is read,
// and every one of them looked lost. A run that truly lost its result is
// found by the next check.
//
// The check nearly always finds none, so the node's jobs are listed by
// their brief fields, and listed whole, as the recovery needs them, only
// when one of them is an orphan.
func (r *jobRunner) recoverOrphans(ctx context.Context) error {
	heldBefore := r.books.Held()
	orphaned := func(job *engine.Job) bool { return !heldBefore[job.ID] && r.orphaned(job) }
	mine := engine.JobListParams{Node: r.cfg.Name, Statuses: engine.NodeOwnedStatuses, Brief: true}
	brief, err := r.store.JobList(ctx, mine)
	if err != nil || !slices.ContainsFunc(brief, orphaned) {
		return err
	}
	mine.Brief = false
	jobs, err := r.store.JobList(ctx, mine)
	if err != nil {
		return err
	}
	orphans := slices.DeleteFunc(jobs, func(job *engine.Job) bool { return !orphaned(job) })
	return r.recoverJobs(ctx, orphans, "node "+r.cfg.Name+" lost track of the run", "recovered a job this node no longer runs")
}

// orphaned reports whether the store's job, which it says runs here, has
// neither a run on this node's books nor a result waiting to be recorded.
func (r *jobRunner) orphaned(job *engine.Job) bool {
	return !r.books.Holds(job.ID) && !r.results.holds(job.ID)
}

// owns reports whether the job, as stored, is still the run ar: on node,
// this attempt, started and not ended. A job recovered and offered anew —
// even to this node — is back in the queue with the same attempt number
// until it starts again, and is no longer ar's.
func owns(node string, job *engine.Job, ar *activeRun) bool {
	return job.Node == node && job.Attempt == ar.attempt && job.Status.NodeOwned()
}

// recoverOwnJobs restarts jobs a former process of this node left behind:
// they died with it (its watchdog killed them), so they must run again.
func (r *jobRunner) recoverOwnJobs(ctx context.Context) error {
	jobs, err := r.store.JobList(ctx, engine.JobListParams{Node: r.cfg.Name, Statuses: engine.RecoverableStatuses})
	if err != nil {
		return err
	}
	return r.recoverJobs(ctx, jobs, "node "+r.cfg.Name+" restarted while it ran", "recovered job left by an earlier run of this node")
}

// recoverJobs puts back jobs this node's books do not hold, with the
// children of their attempts (engine.RecoverJobs), and logs each one put
// back with the note said. Children it could not cancel are the lease
// holder's repair sweep's; they only warrant a warning here.
func (r *jobRunner) recoverJobs(ctx context.Context, jobs []*engine.Job, why, said string) error {
	results, err := r.putBack(ctx, jobs, why)
	if results == nil {
		return err
	}
	if err != nil {
		r.log.Warn("cannot cancel the children of all recovered jobs", "err", err)
	}
	for i, res := range results {
		if res.Err == nil {
			r.log.Warn(said, "job", jobs[i].ID, "status", res.Job.Status)
		}
	}
	return nil
}

package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
)

// A job that waits for its children ('jobctl wait --children') is WAITING
// while it does: its process goes on, but it holds no load, in the store
// (the dispatcher counts only load-holding states) and on this node's books
// alike, so the two agree that the node has room for the children — on a
// node whose only room the parent filled, they could not run otherwise.
//
// The node moves the job RUNNING → WAITING with a guarded transition once
// it has seen a child that has not ended, and takes the run's load off its
// books after the store took the move; it moves the job back WAITING →
// RUNNING when the last wait of the run is over (every child ended, the
// wait's timeout passed, or the job stopped asking), putting the load back
// on its books before the store move. In both directions the books are the
// stricter of the two for the moment between, so the node never takes on
// work the store would not let it have.
//
// A run that ends while WAITING (its process exited, it was cancelled —
// CANCELLING, which reconcile acts on as for a running job —, it timed out,
// the node shut down) is recorded like any other, from WAITING: the
// transitions out of WAITING are those out of RUNNING.

// waitTransitionTimeout bounds a move out of WAITING, which is made after
// the job's request is over and so has no context of its own.
const waitTransitionTimeout = 30 * time.Second

// WaitChildren implements endpoint.RunningJob.
func (j runningJob) WaitChildren(ctx context.Context, timeout time.Duration) (endpoint.ChildrenWaited, error) {
	ar, err := j.started(ctx)
	if err != nil {
		return endpoint.ChildrenWaited{}, err
	}
	return j.api.waitChildren(ctx, ar, timeout)
}

// waitChildren waits until every child of the run's job has ended, until
// timeout (0: none) passes or ctx ends, or until the run itself ends. It
// looks again whenever the store reports a change that may be a child
// ending, and every poll interval, since a report may be lost or come from
// another process.
func (a *jobAPI) waitChildren(ctx context.Context, ar *activeRun, timeout time.Duration) (endpoint.ChildrenWaited, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	// Changes made through this process only: children that end on other
	// nodes are seen by the poll, so no node but the dispatcher holds a
	// listening connection to the database.
	var wake <-chan struct{}
	switch c := a.store.(type) {
	case processJobChanges:
		wake = c.ProcessJobChanges(ctx)
	case engine.JobChangeNotifier:
		if ch, err := c.JobChanges(ctx); err == nil {
			wake = ch
		}
	}
	a.mu.Lock()
	ar.waiters++
	a.mu.Unlock()
	defer a.leaveWait(ar)

	id := ar.job.ID
	poll := time.NewTicker(a.pollInterval)
	defer poll.Stop()
	var children []endpoint.Child
	for {
		fresh, err := a.childrenOf(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return endpoint.ChildrenWaited{Children: children}, nil
		case err != nil:
			return endpoint.ChildrenWaited{}, a.jobAPIFailure("wait for its children", id, err)
		}
		children = fresh
		if !slices.ContainsFunc(children, func(c endpoint.Child) bool { return !c.Status.Terminal() }) {
			// A parent cancelled meanwhile has its children cancelled
			// with it: that they ended is no news for a run that is
			// being stopped.
			if stopping, err := a.runStopping(ctx, ar); err != nil || stopping {
				if err != nil {
					return endpoint.ChildrenWaited{}, a.jobAPIFailure("wait for its children", id, err)
				}
				return endpoint.ChildrenWaited{}, errRunEnded
			}
			return endpoint.ChildrenWaited{Ended: true, Children: children}, nil
		}
		entered, err := a.enterWaiting(ctx, ar)
		switch {
		case err != nil && ctx.Err() != nil:
			return endpoint.ChildrenWaited{Children: children}, nil
		case err != nil:
			return endpoint.ChildrenWaited{}, err
		case entered:
			// A child may have ended between the look and the move, and
			// its report come before this wait was WAITING: look again.
			continue
		}
		select {
		case <-ctx.Done():
			return endpoint.ChildrenWaited{Children: children}, nil
		case <-ar.run.Done():
			return endpoint.ChildrenWaited{}, errRunEnded
		case <-wake:
		case <-poll.C:
		}
	}
}

// errRunEnded answers a job's request once its run has ended or is being
// stopped.
var errRunEnded = &endpoint.JobAPIError{Status: http.StatusUnauthorized, Message: "the run this token was given to has ended"}

// runStopping reports whether the run's job has ended, is being cancelled,
// or has moved on to another attempt: its run is over or about to be.
func (a *jobAPI) runStopping(ctx context.Context, ar *activeRun) (bool, error) {
	select {
	case <-ar.run.Done():
		return true, nil
	default:
	}
	j, err := a.store.JobGet(ctx, ar.job.ID)
	if err != nil {
		return false, err
	}
	return j.Attempt != ar.attempt || j.Status == engine.StatusCancelling || !j.Status.NodeOwned(), nil
}

// processJobChanges is a store that reports the job changes made through
// its own process apart from those of others (engine/dbstore).
type processJobChanges interface {
	ProcessJobChanges(ctx context.Context) <-chan struct{}
}

// childrenOf lists the children of job id, brief.
func (a *jobAPI) childrenOf(ctx context.Context, id int64) ([]endpoint.Child, error) {
	jobs, err := a.store.JobList(ctx, engine.JobListParams{ParentID: &id, Brief: true})
	if err != nil {
		return nil, err
	}
	out := make([]endpoint.Child, len(jobs))
	for i, c := range jobs {
		out[i] = endpoint.Child{ID: c.ID, Status: c.Status}
	}
	return out, nil
}

// enterWaiting moves the run's job RUNNING → WAITING and takes its load off
// the books; it reports whether it made the move now. A job already WAITING
// stays so. A job paused meanwhile is left as it is (its wait goes on and
// tries again); a job being cancelled, or no longer this run, cannot wait.
func (a *jobAPI) enterWaiting(ctx context.Context, ar *activeRun) (bool, error) {
	ar.waitMu.Lock()
	defer ar.waitMu.Unlock()
	a.mu.Lock()
	already := ar.waiting
	a.mu.Unlock()
	if already {
		return false, nil
	}
	id := ar.job.ID
	for {
		job, err := a.store.JobGet(ctx, id)
		if err != nil {
			return false, a.jobAPIFailure("wait for its children", id, err)
		}
		if !owns(a.node, job, ar) {
			return false, &endpoint.JobAPIError{Status: http.StatusUnauthorized, Message: "the run this token was given to has ended"}
		}
		switch job.Status {
		case engine.StatusPaused:
			return false, nil
		case engine.StatusCancelling:
			return false, &endpoint.JobAPIError{Status: http.StatusConflict, Message: "the job is being cancelled; it cannot wait"}
		case engine.StatusRunning:
			u := engine.JobUpdate{ID: id, From: engine.StatusRunning, Version: job.Version, To: engine.StatusWaiting}
			if _, err := a.store.JobUpdate(ctx, u); errors.Is(err, engine.ErrConflict) {
				continue
			} else if err != nil {
				return false, a.jobAPIFailure("wait for its children", id, err)
			}
		case engine.StatusWaiting:
			// Left WAITING by a move back that the store did not take.
		default:
			return false, &endpoint.JobAPIError{Status: http.StatusConflict,
				Message: fmt.Sprintf("the job is %s; it cannot wait", job.Status)}
		}
		a.mu.Lock()
		ar.waiting = true
		a.mu.Unlock()
		a.books.SetWaiting(id, true)
		a.runningJobs.Dec()
		a.waitingJobs.Inc()
		a.log.Debug("job waits for its children", "job", id)
		return true, nil
	}
}

// leaveWait ends one wait of the run; the last one brings the job back to
// RUNNING, its load on the books again. That may take the node over its
// max load or max jobs for a while — the children it took meanwhile still
// run — which is accepted: the parent's process never stopped, and the
// node takes no new work until it is under its limits again. A run that
// has ended, or a job that moved on (being cancelled, taken from this
// node), is left to the recording of the run's result.
func (a *jobAPI) leaveWait(ar *activeRun) {
	a.mu.Lock()
	ar.waiters--
	last := ar.waiters == 0
	a.mu.Unlock()
	if !last {
		return
	}
	ar.waitMu.Lock()
	defer ar.waitMu.Unlock()
	a.mu.Lock()
	back := ar.waiters == 0 && ar.waiting
	if back {
		ar.waiting = false
	}
	a.mu.Unlock()
	if !back {
		return // another wait began meanwhile, or the job never was WAITING
	}
	id := ar.job.ID
	a.books.SetWaiting(id, false)
	a.waitingJobs.Dec()
	a.runningJobs.Inc()
	if ended(ar) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTransitionTimeout)
	defer cancel()
	for {
		job, err := a.store.JobGet(ctx, id)
		if err == nil && (!owns(a.node, job, ar) || job.Status != engine.StatusWaiting) {
			return
		}
		if err == nil {
			u := engine.JobUpdate{ID: id, From: engine.StatusWaiting, Version: job.Version, To: engine.StatusRunning}
			if _, err = a.store.JobUpdate(ctx, u); err == nil {
				a.log.Debug("job runs again after waiting for its children", "job", id)
				return
			}
			if errors.Is(err, engine.ErrConflict) {
				continue
			}
		}
		// The job stays WAITING in the store while its process runs: the
		// next wait of the run takes it as it is, and its result moves it
		// on from there.
		a.log.Warn("cannot move a job back to RUNNING after it waited for its children", "job", id, "err", err)
		return
	}
}

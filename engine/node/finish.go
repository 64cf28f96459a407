package node

import (
	"context"
	"errors"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// finish records how a run ended. Logs are flushed first, so whoever sees the
// final state also sees the whole log. The result is written only while the
// job is still this attempt on this node (fencing). A database that does not
// answer is retried for a while; if it stays away, the job is left to the
// orphan check (recoverOrphans) rather than forgotten.
func (n *Runtime) finish(ar *activeRun, res runner.Result) {
	defer n.forget(ar.job.ID, ar)
	ctx, cancel := context.WithTimeout(context.Background(), resultPatience)
	defer cancel()
	if ar.logs != nil {
		if err := ar.logs.Close(ctx); err != nil {
			n.log.Warn("lost part of a job's log", "job", ar.job.ID, "err", err)
		}
	}
	delay := 100 * time.Millisecond
	for {
		done, err := n.recordResult(ctx, ar, res)
		if done {
			return
		}
		if err != nil {
			n.log.Warn("cannot record job result yet; retrying", "job", ar.job.ID, "in", delay, "err", err)
		}
		select {
		case <-ctx.Done():
			n.log.Error("gave up recording a job result; the job is recovered once the database answers",
				"job", ar.job.ID, "result", res.Reason)
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// resultPatience is how long a node keeps trying to record a job's result.
const resultPatience = 2 * time.Minute

// recordResult writes the run's result once; done reports that nothing is
// left to do (written, or fenced off). A conflict — an operator changed the
// job meanwhile — is decided again at once.
func (n *Runtime) recordResult(ctx context.Context, ar *activeRun, res runner.Result) (done bool, err error) {
	for {
		job, err := n.store.JobGet(ctx, ar.job.ID)
		if errors.Is(err, engine.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		n.mu.Lock()
		fenced, shutdown := ar.fenced, ar.shutdown
		n.mu.Unlock()
		if fenced || !n.owns(job, ar) {
			n.log.Warn("dropped the result of a job taken from this node", "job", job.ID, "attempt", ar.attempt, "result", res.Reason)
			return true, nil
		}
		u := engine.OutcomeUpdate(job, res, shutdown, n.random)
		_, err = n.store.JobUpdate(ctx, u)
		if errors.Is(err, engine.ErrConflict) {
			continue
		}
		if err != nil {
			return false, err
		}
		n.metrics.completed.WithLabelValues(string(u.To)).Inc()
		n.log.Info("job ended", "job", job.ID, "attempt", ar.attempt, "status", u.To, "result", res.Reason)
		return true, nil
	}
}

package node

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// resultPatience is how long a node keeps trying to record a job's result.
const resultPatience = 2 * time.Minute

// finish records how a run ended. Logs are flushed first, so whoever sees
// the final state also sees the whole log; then the result joins the next
// batch of results (completionBatcher). It is written only while the job is
// still this attempt on this node (fencing). A database that does not
// answer is retried for resultPatience; if it stays away, the job is left
// to the orphan check (recoverOrphans) rather than forgotten. The run stays
// on the books until its result is recorded or dropped.
func (n *Runtime) finish(ar *activeRun, res runner.Result) {
	deadline := time.Now().Add(resultPatience)
	if ar.out != nil {
		if err := ar.out.Close(deadline); err != nil {
			n.log.Warn("lost part of a job's log", "job", ar.job.ID, "err", err)
		}
	}
	n.completions.add(completion{run: ar, result: res, deadline: deadline})
}

// recordAlone records one result on its own, reading the job first and
// deciding anew: the path of a result whose job changed since its run
// started (an operator paused it, it was taken from this node).
func (n *Runtime) recordAlone(c completion) {
	ar := c.run
	defer n.forget(ar.job.ID, ar)
	ctx, cancel := context.WithDeadline(context.Background(), c.deadline)
	defer cancel()
	delay := 100 * time.Millisecond
	for {
		done, err := n.recordResult(ctx, ar, c.result)
		if done {
			return
		}
		if err != nil {
			n.log.Warn("cannot record job result yet; retrying", "job", ar.job.ID, "in", delay, "err", err)
		}
		select {
		case <-ctx.Done():
			n.logGiveUp(c)
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

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
			n.logDropped(ar, res)
			return true, nil
		}
		u := n.outcomeUpdate(job, ar, res, shutdown)
		_, err = n.store.JobUpdate(ctx, u)
		if errors.Is(err, engine.ErrConflict) {
			continue
		}
		if err != nil {
			return false, err
		}
		n.recorded(ar, u, res)
		return true, nil
	}
}

// outcomeUpdate is where a run's result takes the job, as read: a job
// refused for its spec fails for good unless it is being cancelled anyway.
func (n *Runtime) outcomeUpdate(job *engine.Job, ar *activeRun, res runner.Result, shutdown bool) engine.JobUpdate {
	if ar.refused && job.Status != engine.StatusCancelling {
		return engine.RefuseUpdate(job, n.cfg.Name, res.Reason)
	}
	return engine.OutcomeUpdate(job, res, shutdown, n.random)
}

// recorded counts and logs a result the store took. A job that finished
// as it should is logged at debug level only: in a burst of short jobs the
// line would cost more than the job.
func (n *Runtime) recorded(ar *activeRun, u engine.JobUpdate, res runner.Result) {
	n.metrics.completed.WithLabelValues(string(u.To)).Inc()
	level := slog.LevelInfo
	if u.To == engine.StatusFinished {
		level = slog.LevelDebug
	}
	if n.log.Enabled(context.Background(), level) {
		n.log.Log(context.Background(), level, "job ended", "job", ar.job.ID, "attempt", ar.attempt, "status", u.To, "result", res.Reason)
	}
}

func (n *Runtime) logDropped(ar *activeRun, res runner.Result) {
	n.log.Warn("dropped the result of a job taken from this node", "job", ar.job.ID, "attempt", ar.attempt, "result", res.Reason)
}

func (n *Runtime) logGiveUp(c completion) {
	n.log.Error("gave up recording a job result; the job is recovered once the database answers",
		"job", c.run.job.ID, "result", c.result.Reason)
}

package node

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// maxBackoff caps the delay before a retry.
const maxBackoff = time.Hour

// finish records how a run ended. Logs are flushed first, so whoever sees the
// final state also sees the whole log. The result is written only while the
// job is still this attempt on this node (fencing). A database that does not
// answer is retried for a while; if it stays away, the job is left to the
// orphan check (recoverOrphans) rather than forgotten.
func (n *Node) finish(ar *activeRun, res runner.Result) {
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
func (n *Node) recordResult(ctx context.Context, ar *activeRun, res runner.Result) (done bool, err error) {
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
		u := outcome(job, res, shutdown)
		if u.To == engine.StatusRestart {
			u.Node = engine.Ptr("")
		}
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

// outcome maps a run's result to the job's next state (DESIGN.md §6).
func outcome(job *engine.Job, res runner.Result, shutdown bool) engine.JobUpdate {
	u := engine.JobUpdate{ID: job.ID, From: job.Status, Version: job.Version, MarkFinished: true,
		Message: engine.Ptr(res.Reason)}
	if res.ExitCode >= 0 {
		u.ExitCode = engine.Ptr(res.ExitCode)
	}
	switch {
	case job.Status == engine.StatusCancelling:
		u.To, u.Message = engine.StatusCancelled, engine.Ptr("cancelled by operator")
	case shutdown:
		u.To, u.MarkFinished, u.Message = engine.StatusRestart, false, engine.Ptr("node stopped while the job ran")
	case res.Outcome == runner.TimedOut || res.Outcome == runner.Cancelled:
		u.To = engine.StatusCancelled
	case res.Outcome == runner.Succeeded:
		u.To = engine.StatusFinished
	case res.Outcome == runner.SucceededWithWarning:
		u.To, u.Message = engine.StatusWarning, engine.Ptr(res.Warning)
	case job.AttemptsLeft() > 0:
		delay := backoff(time.Duration(job.Backoff), job.Attempt-job.AttemptBase)
		u.To, u.MarkFinished, u.RunAfterSeconds = engine.StatusRestart, false, engine.Seconds(delay)
		u.Message = engine.Ptr(res.Reason + "; retrying in " + delay.Round(time.Millisecond).String())
	default:
		u.To = engine.StatusFailed
	}
	return u
}

// backoff is the delay before retry number attempt: base doubling per
// attempt, with ±25% jitter so failed jobs do not retry in lockstep.
func backoff(base time.Duration, attempt int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := float64(base) * math.Pow(2, float64(attempt-1))
	d *= 0.75 + rand.Float64()/2
	return min(time.Duration(d), maxBackoff)
}

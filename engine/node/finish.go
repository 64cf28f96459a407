package node

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// logCloseTimeout bounds storing the end of a run's log before its result
// is queued: a database that does not answer must not hold the result back
// (it is kept on disk only once a try to record it failed).
const logCloseTimeout = 10 * time.Second

// finish records how a run ended. Logs are flushed first, so whoever sees
// the final state also sees the whole log; then the result joins the
// result recorder's next batch (completionBatcher). It is written only
// while the job is still this attempt on this node (fencing). A database
// that does not answer is retried for as long as it takes, the result kept
// on disk meanwhile; the run stays on the books until its result is
// recorded or dropped, so the orphan check (recoverOrphans) leaves its job
// alone.
func (r *jobRunner) finish(ar *activeRun, res runner.Result) {
	c := &completion{run: ar, result: res, endedAt: r.clock.Now(), lease: r.fence.endLease()}
	r.observeEnd(ar, res)
	if ar.out != nil {
		c.logPending = ar.out.Close(time.Now().Add(logCloseTimeout)) != nil
	}
	r.results.add(c)
}

// flushLog tries again to store the end of a run's log that finish could
// not, before its result.
func (r *resultRecorder) flushLog(ctx context.Context, c *completion) {
	if !c.logPending {
		return
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(logCloseTimeout)
	}
	c.logPending = c.run.out.Close(deadline) != nil
}

// recordAlone records one result on its own, reading the job first and
// deciding anew: the path of a result whose job changed since its run
// started (an operator paused it, it was taken from this node). A database
// that does not answer hands it back to the batcher, to be retried there.
func (r *resultRecorder) recordAlone(c *completion) {
	ctx, cancel := context.WithTimeout(context.Background(), resultTryTimeout)
	defer cancel()
	if err := r.recordOnce(ctx, c); err != nil {
		c.alone = true
		r.batcher.again(c, err)
	}
}

// recordOnce is one try of recording a result alone; it settles the result
// unless the store did not answer.
func (r *resultRecorder) recordOnce(ctx context.Context, c *completion) error {
	r.flushLog(ctx, c)
	verdict, err := r.recordResult(ctx, c.run, c.result)
	if err != nil {
		return err
	}
	if verdict == resultFenced {
		taken, err := r.takeLateResult(ctx, c)
		if err != nil {
			return err
		}
		if !taken {
			r.logDropped(c.run, c.result)
		}
	}
	r.settle(c)
	return nil
}

// resultVerdict is what became of a result the store answered for.
type resultVerdict int

const (
	resultRecorded resultVerdict = iota + 1
	resultFenced                 // the job moved on: another attempt, another node, or ended
	resultGone                   // the job no longer exists
	resultRefused                // the store refuses the transition for good
)

// recordResult writes the run's result once, reading the job first; an
// error means the store did not answer, and nothing is decided. A conflict
// — an operator changed the job meanwhile — is decided again at once.
func (r *resultRecorder) recordResult(ctx context.Context, ar *activeRun, res runner.Result) (resultVerdict, error) {
	for {
		job, err := r.store.JobGet(ctx, ar.job.ID)
		if errors.Is(err, engine.ErrNotFound) {
			return resultGone, nil
		}
		if err != nil {
			return 0, err
		}
		fenced, shutdown := r.runs.stopState(ar)
		if fenced || !owns(r.node, job, ar) {
			return resultFenced, nil
		}
		u := r.outcomeUpdate(job, ar, res, shutdown)
		_, err = r.recordOutcome(ctx, job, u)
		switch {
		case errors.Is(err, engine.ErrChildrenLeft):
			r.log.Warn("cannot cancel all the children of a job that goes back to the queue", "job", ar.job.ID, "err", err)
		case errors.Is(err, engine.ErrConflict):
			continue
		case errors.Is(err, engine.ErrInvalidTransition) || errors.Is(err, engine.ErrInvalid):
			// The database answered, and trying again would not change it.
			r.log.Error("the store refuses a job's result; dropping it", "job", ar.job.ID, "attempt", ar.attempt,
				"result", res.Reason, "err", err)
			return resultRefused, nil
		case err != nil:
			return 0, err
		}
		r.recorded(ar, u, res)
		return resultRecorded, nil
	}
}

// outcomeUpdate is where a run's result takes the job, as read: a job
// refused for its spec fails for good unless it is being cancelled anyway.
func (r *resultRecorder) outcomeUpdate(job *engine.Job, ar *activeRun, res runner.Result, shutdown bool) engine.JobUpdate {
	if ar.refused && job.Status != engine.StatusCancelling {
		return engine.RefuseUpdate(job, r.node, res.Reason)
	}
	return engine.OutcomeUpdate(job, res, shutdown, r.random)
}

// recorded counts and logs a result the store took. A job that finished
// as it should is logged at debug level only: in a burst of short jobs the
// line would cost more than the job.
func (r *resultRecorder) recorded(ar *activeRun, u engine.JobUpdate, res runner.Result) {
	r.completed.WithLabelValues(string(u.To)).Inc()
	level := slog.LevelInfo
	if u.To == engine.StatusFinished {
		level = slog.LevelDebug
	}
	if r.log.Enabled(context.Background(), level) {
		r.log.Log(context.Background(), level, "job ended", "job", ar.job.ID, "attempt", ar.attempt, "status", u.To, "result", res.Reason)
	}
}

func (r *resultRecorder) logDropped(ar *activeRun, res runner.Result) {
	r.log.Warn("dropped the result of a job taken from this node", "job", ar.job.ID, "attempt", ar.attempt, "result", res.Reason)
}

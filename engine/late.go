package engine

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// LateRun is the result of a run that its node could not record while it
// was cut off from the database, offered once the node is back.
type LateRun struct {
	JobID   int64
	Attempt int    // the attempt the run was
	Node    string // the node it ran on
	Result  RunResult
}

// lateResultEndings are where a late result may take a job put back to
// RESTART: the endings of OutcomeUpdate for a run that ended on its own
// (a retry stays RESTART).
var lateResultEndings = []Status{StatusFinished, StatusWarning, StatusFailed, StatusCancelled, StatusRestart}

// LateOutcomeUpdate is the transition that takes the late result of run
// for job, as read: the job was put back to RESTART when run's node was
// given up on (RecoverUpdate), and no attempt has started since. It goes
// where OutcomeUpdate would have taken it had the result come in time: an
// ending keeps the run's node on the row, as any ended job does, and a
// retry stays RESTART with the outcome's backoff. The attempt number
// stays that of the run. LateOutcome checks that the job is in that case.
func LateOutcomeUpdate(job *Job, run LateRun, random func() float64) JobUpdate {
	ran := *job
	ran.Status, ran.Node = StatusRunning, run.Node
	u := OutcomeUpdate(&ran, run.Result, false, random)
	u.From, u.LateResult = job.Status, true
	if u.To != StatusRestart {
		u.Node = Ptr(run.Node)
	}
	return u
}

// TakesLateResult reports whether the transition from before to after
// takes the late result of before's attempt (LateOutcomeUpdate): a write
// (the version moves on) from RESTART without a node, at the same attempt,
// to a retry or to an ending on the run's node. No other transition does
// so: RESTART → RESTART is this one only, and no other leaves RESTART for
// an ending with a node.
// The stores rewrite that attempt's record by it, so the job keeps one
// record of the attempt and it says how the run ended: the SQL store's
// triggers of migration 017 are the copy of this rule.
func TakesLateResult(before, after *Job) bool {
	return before.Status == StatusRestart && before.Node == "" && before.Attempt > 0 &&
		after.Attempt == before.Attempt && after.Version != before.Version &&
		(after.Status == StatusRestart || after.Status.Terminal() && after.Node != "")
}

// LateAttempt is recorded, the record of an attempt that a recovery ended
// with RESTART, rewritten with the late result that the transition to
// after took, at endedAt (the store's clock): the run's node and start
// stay, its end is the result's.
func LateAttempt(recorded Attempt, after *Job, endedAt time.Time) Attempt {
	a := recorded
	a.EndedAt, a.Ending, a.Message, a.ExitCode, a.Usage = Ptr(endedAt), after.Status, after.Message, nil, nil
	if after.ExitCode != nil {
		a.ExitCode = Ptr(*after.ExitCode)
	}
	if after.Usage != nil {
		a.Usage = Ptr(*after.Usage)
	}
	return a
}

// LateOutcome takes the result of a run that its node recorded too late,
// when nothing has replaced the run yet: the node was cut off from the
// database past its node lease, the lease holder put the job back to
// RESTART (RecoverUpdate), and no node has started it since. The job then
// goes where the result takes it (LateOutcomeUpdate) instead of running
// again, and the queued attempt is dropped.
//
// Only the node knows that the run ended while it still held its node
// lease, before anyone could have given up on it; it calls this for such
// a run only. Here, in one transaction, the job must still be RESTART
// with no node at the run's attempt, and that attempt's record must say
// it was taken from run.Node back to RESTART. Otherwise the result is
// refused with an error matching ErrConflict and the job is left alone:
// it moved on (it runs again, was cancelled, paused or requeued), or was
// never this run's.
func LateOutcome(ctx context.Context, store Store, run LateRun, random func() float64) (*Job, error) {
	var out *Job
	err := store.Tx(ctx, func(tx TxStore) error {
		job, err := tx.JobGet(ctx, run.JobID)
		if err != nil {
			return err
		}
		if job.Status != StatusRestart || job.Node != "" || job.Attempt != run.Attempt {
			return fmt.Errorf("late result of job %d attempt %d: the job is %s at attempt %d: %w",
				run.JobID, run.Attempt, job.Status, job.Attempt, ErrConflict)
		}
		attempts, err := tx.JobAttemptList(ctx, run.JobID)
		if err != nil {
			return err
		}
		if !takenFrom(attempts, run) {
			return fmt.Errorf("late result of job %d attempt %d: that attempt was not taken from node %s: %w",
				run.JobID, run.Attempt, run.Node, ErrConflict)
		}
		out, err = tx.JobUpdate(ctx, LateOutcomeUpdate(job, run, random))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// takenFrom reports whether attempts record run's attempt as ended on
// run's node by going back to RESTART: a recovery took it.
func takenFrom(attempts []Attempt, run LateRun) bool {
	i := slices.IndexFunc(attempts, func(a Attempt) bool { return a.Attempt == run.Attempt })
	return i >= 0 && attempts[i].Node == run.Node && attempts[i].Ending == StatusRestart
}

package engine

import (
	"math"
	"time"
)

// RunOutcome is how a run ended.
type RunOutcome string

// The outcomes of a run.
const (
	RunSucceeded            RunOutcome = "succeeded"              // exit 0
	RunSucceededWithWarning RunOutcome = "succeeded-with-warning" // exit 0 after a jobctl:warning line
	RunFailed               RunOutcome = "failed"                 // non-zero exit, killed by a signal, or not startable
	RunFailedFinally        RunOutcome = "failed-finally"         // a failure the handler knows another attempt cannot mend
	RunCancelled            RunOutcome = "cancelled"              // stopped on request
	RunTimedOut             RunOutcome = "timed-out"              // stopped at the job's timeout
)

// RunResult is how one run of a job ended.
type RunResult struct {
	// ExitCode is the process's exit code: -1 when a signal ended it, 127
	// (126 when not executable) when it could not be started, like a shell.
	// Builtins give 0 on success, 1 on error and -1 when stopped.
	ExitCode int
	Outcome  RunOutcome
	// Warning is the most recent warning the job reported, if any.
	Warning string
	// Reason is one line for operators: "exit code 3", "killed by SIGKILL",
	// "timed out after 1m0s", "cancelled: <reason>", "killed: out of
	// memory, limit 2GiB".
	Reason string
	// Usage is what the run used; nil when it was not measured.
	Usage *Usage
}

// MaxBackoff caps the delay before a retry.
const MaxBackoff = time.Hour

// Message of a job put back because its node stopped while it ran.
const MessageNodeStopped = "node stopped while the job ran"

// OutcomeUpdate maps a run's result to the job's next state, for the job
// as its node read it just now: a job being cancelled ends CANCELLED; a run
// cut off by its node's shutdown goes back to RESTART; exit 0 ends FINISHED
// (WARNING after a warning); a timeout or cancel ends CANCELLED; a failure
// is retried (RESTART after Backoff) while attempts remain, else FAILED,
// and a failure its handler called final ends FAILED at once.
// random returns numbers in [0, 1) for the backoff's jitter.
func OutcomeUpdate(job *Job, res RunResult, shutdown bool, random func() float64) JobUpdate {
	u := guarded(job)
	u.MarkFinished, u.Message = true, Ptr(res.Reason)
	if res.Usage != nil {
		u.Usage = Ptr(*res.Usage)
	}
	if res.ExitCode >= 0 {
		u.ExitCode = Ptr(res.ExitCode)
	}
	switch {
	case job.Status == StatusCancelling:
		u.To, u.Message = StatusCancelled, Ptr(MessageCancelled)
	case shutdown:
		u.To, u.MarkFinished, u.Message = StatusRestart, false, Ptr(MessageNodeStopped)
	case res.Outcome == RunTimedOut || res.Outcome == RunCancelled:
		u.To = StatusCancelled
	case res.Outcome == RunSucceeded:
		u.To = StatusFinished
	case res.Outcome == RunSucceededWithWarning:
		u.To, u.Message = StatusWarning, Ptr(res.Warning)
	case res.Outcome == RunFailedFinally:
		u.To = StatusFailed
	case job.AttemptsLeft() > 0:
		delay := Backoff(time.Duration(job.Backoff), job.Attempt-job.AttemptBase, random)
		u.To, u.MarkFinished, u.RunAfterSeconds = StatusRestart, false, Seconds(delay)
		u.Message = Ptr(res.Reason + "; retrying in " + delay.Round(time.Millisecond).String())
	default:
		u.To = StatusFailed
	}
	if u.To == StatusRestart {
		u.Node = Ptr("")
	}
	return u
}

// Backoff is the delay before retry number retry (1 for the first): base
// doubling per retry, with ±25% jitter so failed jobs do not retry in
// lockstep, capped at MaxBackoff. random returns numbers in [0, 1).
func Backoff(base time.Duration, retry int, random func() float64) time.Duration {
	if base <= 0 {
		return 0
	}
	d := float64(base) * math.Pow(2, float64(max(retry, 1)-1))
	d *= 0.75 + random()/2
	// Compared as a float: after enough retries the doubling no longer fits
	// a Duration, and the conversion would wrap to a negative delay.
	if d >= float64(MaxBackoff) {
		return MaxBackoff
	}
	return time.Duration(d)
}

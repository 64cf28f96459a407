package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// JobUpdate is one guarded, versioned transition of a job: the store applies
// it only while the job still has status From and version Version, bumps the
// version, and reports ErrConflict otherwise. Nil or false fields leave the
// column as it is.
type JobUpdate struct {
	ID      int64
	From    Status
	Version int64
	To      Status

	Node             *string // "" clears the node
	IncrementAttempt bool    // a new run starts, with no exit code or usage yet (the last run's stay with its Attempt)
	RebaseAttempts   bool    // a requeue: max attempts count again from the current attempt
	ExitCode         *int    // set; ClearResult clears it
	// Usage is what the run that this transition ends used: kept on the
	// job (Job.Usage) and with the attempt it ends. IncrementAttempt and
	// ClearResult clear the job's.
	Usage           *Usage
	Message         *string  // why the job is in its new state
	RunAfterSeconds *float64 // run_after = database now + seconds
	ClearResult     bool     // exit code, usage, progress, finished_at and run_after reset (requeue)
	MarkQueued      bool     // queued_at = database now
	MarkStarted     bool     // started_at = database now
	MarkFinished    bool     // finished_at = database now
	Priority        *int     // the job's new priority (MinPriority to MaxPriority)

	// StartedUnder, on the start of an attempt, records the dispatcher and
	// its lease term on the job, and the transition applies only while that
	// term is the current, unexpired lease of that owner on the database
	// clock: an offer made under a lease since lost or taken over never
	// becomes a run. The store reports a start refused so as ErrConflict;
	// the job is left as it was.
	StartedUnder *LeaseTerm

	// LateResult marks the transition that takes the late result of a
	// run its job was put back to RESTART from (LateOutcomeUpdate): from
	// RESTART to where the result leads, which no other transition may
	// take. The guard is the job's version, as for any update; LateOutcome
	// checks the rest before it.
	LateResult bool
}

// allowedTransitions is the job state machine. A transition to the same
// state is allowed nowhere.
var allowedTransitions = map[Status][]Status{
	StatusInstantiated: {StatusQueued, StatusCancelled},
	// QUEUED or RESTART → RUNNING is a node starting a job offered straight
	// from the queue (the start is the claim); → FAILED, the dispatcher
	// failing a job a node refused for good before starting it.
	StatusQueued:  {StatusRunning, StatusPaused, StatusCancelled, StatusFailed},
	StatusRestart: {StatusRunning, StatusPaused, StatusCancelled, StatusFailed},
	StatusRunning: {StatusFinished, StatusWarning, StatusFailed, StatusRestart, StatusCancelling,
		StatusCancelled, StatusPaused, StatusWaiting},
	StatusPaused: {StatusQueued, StatusRestart, StatusRunning, StatusCancelling, StatusCancelled,
		StatusFinished, StatusWarning, StatusFailed},
	StatusWaiting: {StatusRunning, StatusRestart, StatusCancelling, StatusCancelled,
		StatusFinished, StatusWarning, StatusFailed},
	StatusCancelling: {StatusCancelled},
	StatusFinished:   {StatusRestart, StatusDeleted},
	StatusWarning:    {StatusRestart, StatusDeleted},
	StatusFailed:     {StatusRestart, StatusDeleted},
	StatusCancelled:  {StatusRestart, StatusDeleted},
	StatusDeleted:    {},
}

// allowed reports whether the state machine allows u: a late result only
// from RESTART to one of its endings, any other update as allowedTransitions
// says.
func (u JobUpdate) allowed() bool {
	if u.LateResult {
		return u.From == StatusRestart && slices.Contains(lateResultEndings, u.To)
	}
	return CanTransition(u.From, u.To)
}

// CanTransition reports whether the state machine allows from → to.
func CanTransition(from, to Status) bool {
	for _, s := range allowedTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Validate refuses an update the state machine does not allow.
func (u JobUpdate) Validate() error {
	if !u.allowed() {
		return &TransitionError{ID: u.ID, From: u.From, To: u.To}
	}
	if u.Priority != nil && (*u.Priority < MinPriority || *u.Priority > MaxPriority) {
		return &TransitionError{ID: u.ID, From: u.From, To: u.To, Reason: PriorityProblem(*u.Priority)}
	}
	if t := u.StartedUnder; t != nil && (t.Owner == "" || t.Term <= 0) {
		return &TransitionError{ID: u.ID, From: u.From, To: u.To, Reason: fmt.Sprintf("lease term %d of %q names no term", t.Term, t.Owner)}
	}
	return nil
}

// ErrBatchPriority refuses a priority in JobUpdateMany: the batches are the
// hot path of dispatch, start and finish, which never change one; an
// operator changes a job's priority through JobUpdate.
var ErrBatchPriority = errors.New("a priority is changed one job at a time, not in a batch")

// TransitionError is a transition the state machine refuses.
type TransitionError struct {
	ID       int64
	From, To Status
	Reason   string
}

func (e *TransitionError) Error() string {
	msg := fmt.Sprintf("job %d is %s and cannot become %s", e.ID, e.From, e.To)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// ErrInvalidTransition matches every *TransitionError with errors.Is.
var ErrInvalidTransition = errors.New("invalid transition")

// Is lets errors.Is(err, ErrInvalidTransition) match.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// Ptr returns a pointer to v, for the optional fields of JobUpdate.
func Ptr[T any](v T) *T { return &v }

// Seconds converts a duration to the float seconds the store takes.
func Seconds(d time.Duration) *float64 { return Ptr(d.Seconds()) }

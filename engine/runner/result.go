package runner

import (
	"syscall"

	"github.com/jobctl/jobctl/engine"
)

// Outcome is how a run ended; the engine maps it to the job's next state.
type Outcome = engine.RunOutcome

// The outcomes of a run.
const (
	Succeeded            = engine.RunSucceeded
	SucceededWithWarning = engine.RunSucceededWithWarning
	Failed               = engine.RunFailed
	FailedFinally        = engine.RunFailedFinally
	Cancelled            = engine.RunCancelled
	TimedOut             = engine.RunTimedOut
)

// Result is how a run ended; it is valid once Run.Done is closed.
type Result = engine.RunResult

// ending is what a process or builtin reports when it ends, before a stop
// request or a warning decides the outcome.
type ending struct {
	exitCode int
	ok       bool
	final    bool // a failure no further attempt can mend (a builtin's Final error)
	reason   string
	signal   syscall.Signal // the signal that ended the process; 0: it exited
	usage    *engine.Usage  // what the run used; nil: not measured (a builtin)
}

package runner

// Outcome is how a run ended.
type Outcome string

// The outcomes of a run.
const (
	Succeeded            Outcome = "succeeded"              // exit 0
	SucceededWithWarning Outcome = "succeeded-with-warning" // exit 0 after a jobctl:warning line
	Failed               Outcome = "failed"                 // non-zero exit, killed by a signal, or not startable
	Cancelled            Outcome = "cancelled"              // stopped by Cancel
	TimedOut             Outcome = "timed-out"              // stopped by Spec.Timeout
)

// Result is how a run ended; it is valid once Run.Done is closed.
type Result struct {
	// ExitCode is the process's exit code: -1 when a signal ended it, 127
	// (126 when not executable) when it could not be started, like a shell.
	// Builtins give 0 on success, 1 on error and -1 when stopped.
	ExitCode int
	Outcome  Outcome
	// Warning is the most recent warning the job reported, if any.
	Warning string
	// Reason is one line for operators: "exit code 3", "killed by SIGKILL",
	// "timed out after 1m0s", "cancelled: <reason>".
	Reason string
}

// ending is what a process or builtin reports when it ends, before a stop
// request or a warning decides the outcome.
type ending struct {
	exitCode int
	ok       bool
	reason   string
}

package runner

import (
	"syscall"
	"time"

	"github.com/jobctl/jobctl/engine/cgroup"
)

// DefaultGrace is how long a job may take to exit after SIGTERM when its
// timeout stops it and Spec.Grace is zero.
const DefaultGrace = 10 * time.Second

// Spec says what to run.
type Spec struct {
	JobID   int64
	Attempt int
	// Argv is the command of a process handler; argv[0] is looked up in PATH
	// (exec.LookPath) and exec'd directly. Builtins read their arguments here.
	Argv []string
	// Stdin is the payload JSON, written to the process's stdin.
	Stdin []byte
	// Env is the process's whole environment besides JOBCTL_JOB_ID and
	// JOBCTL_ATTEMPT: KEY=VALUE pairs, later entries win. Nothing of the
	// node's own environment is added.
	Env []string
	// Dir is the working directory; empty means the node's.
	Dir string
	// Credential, if set, is the user and groups the process runs as
	// instead of the node's; the node must be allowed to switch to them.
	Credential *syscall.Credential
	// Timeout stops the run after this much wall-clock time since it started,
	// paused time included, so a paused job cannot hold its slot forever.
	// Zero means no timeout.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL when the timeout stops
	// the run; zero means DefaultGrace.
	Grace time.Duration
	// Watcher, if set, learns of a process run's process group.
	Watcher GroupWatcher
	// Group, if set, is the cgroup a process run is born in, where its
	// use is measured and its limits held. Start takes it over: it is
	// emptied and removed once the run has ended. A builtin has none.
	Group *cgroup.Group
}

// GroupWatcher follows the process groups of runs, for what must kill them
// when the runner cannot (a watchdog beside a node that may die).
type GroupWatcher interface {
	// WatchGroup is called once the group's leader is started, before
	// Start returns.
	WatchGroup(pgid int)
	// ForgetGroup is called once the leader has exited and what was left
	// of its group has been killed, just before the leader is reaped: its
	// zombie still holds the group id, so no other process can have it yet.
	ForgetGroup(pgid int)
}

func (s Spec) grace() time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return DefaultGrace
}

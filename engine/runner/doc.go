// Package runner runs one attempt of a job on a node: either a child
// process exec'd straight from an argv, never through a shell, or an
// in-process builtin handler such as noop and sleep.
//
// A process handler runs in its own process group, so pause (SIGSTOP),
// resume (SIGCONT) and cancel (SIGTERM, then SIGKILL after a grace period)
// reach everything the job started. Its payload arrives on stdin; stdout and
// stderr are the job's log. Stdout lines of the form
//
//	jobctl:progress N [text]
//	jobctl:warning text
//
// report progress and make a successful exit end with a warning. When the
// main process exits, whatever it left running in its process group is
// killed: a job is over when its process is, and nothing of it may go on
// while the job is retried elsewhere. For the same reason every child gets
// SIGKILL when the node process dies (the Linux parent-death signal), and a
// GroupWatcher (the node's watchdog) learns each process group, so it can
// kill the rest of the tree, which that signal does not reach.
//
// The runner knows nothing about the store: the node passes an Output that
// forwards progress and warnings, and a LogBatcher that writes the log to the
// database in capped, batched chunks.
package runner

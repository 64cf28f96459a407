// Package watchdog is the small process that runs beside a node and kills
// the process groups of the node's jobs when the node can no longer be
// trusted to stop them itself: when the node dies, and when it has not
// recorded its liveness in the database for its node lease (it may be
// frozen, or cut off from the database, while the cluster restarts its jobs
// elsewhere). A parent-death signal reaches only a job's direct child; the
// watchdog kills the job's whole process group, grandchildren included.
//
// The node starts it (`jobctl watchdog`, see Start) in a process group of
// its own, with pipes on its stdin and stdout, and they speak lines of text.
// Node to watchdog:
//
//	watch PGID    kill process group PGID when fencing
//	forget PGID   the group is gone (its leader is about to be reaped)
//	until MILLIS  fence unless another until arrives within MILLIS ms,
//	              measured on the watchdog's own monotonic clock
//
// Watchdog to node: first "watchdog 1" (protocol 1), then one reply per
// command, in order, and "fenced N" whenever it fences:
//
//	watching PGID      the group is watched
//	killed PGID        the group was watched while fenced, and killed at once
//	forgot PGID        the group is no longer watched
//	forgot PGID killed ... and the watchdog had SIGKILLed it
//	until MILLIS       the deadline is set; a fence is over (an until of no
//	                   time at all fences instead, and says so first)
//	fenced N           the deadline passed: the N watched groups were SIGKILLed,
//	                   and groups watched from now on are killed at once,
//	                   until the next until
//	error TEXT         a line it could not read, and did nothing about
//
// There is no deadline before the first until. End of file on stdin means
// the node is gone — the kernel closes the pipe however the node ended,
// SIGKILL and out-of-memory kills included — so the watchdog SIGKILLs every
// watched group and exits. It never waits on its stdout before killing: a
// frozen node does not read it.
//
// A process that leaves its job's group (setsid, setpgid) is out of the
// watchdog's reach, as it is out of the runner's; only a cgroup per job
// would hold it, and that needs a delegated cgroup v2 tree.
package watchdog

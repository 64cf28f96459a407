package runner

import (
	"os/exec"
	"runtime"
	"sync"
)

// Linux sends the parent-death signal (Pdeathsig) when the thread that
// forked the child exits, not when the process does. Go may end an OS thread
// at any time (for instance when a goroutine that locked it returns), which
// would SIGKILL a healthy job. So every child is started from a goroutine
// locked to its own thread for the life of the node: that thread ends only
// when the node does, which is exactly when the children must die.
//
// There are spawnThreads of them, taking requests as they come: a start
// waits for its child to exec, and on a busy machine one start takes
// milliseconds, so a node starting a hundred jobs a second from one thread
// left them queued for tens of milliseconds, RUNNING with no process yet.
// Linux lets the threads fork at once.

// The same thread forks a child into its cgroup where that takes the
// thread's own move (cgroup v1): enter moves the thread in just before the
// fork, and the leave it returns moves it back just after.

type spawnRequest struct {
	cmd   *exec.Cmd
	enter func() (leave func() error, err error) // nil: the child stays in the node's cgroup
	reply chan spawnReply
}

type spawnReply struct {
	err      error // cmd.Start's, or entering the cgroup's: nothing was started
	leaveErr error // the thread could not leave the cgroup; the child started
}

// spawnThreads is how many threads start children.
const spawnThreads = 4

var (
	spawnOnce     sync.Once
	spawnRequests chan spawnRequest
)

// spawn starts cmd on a spawner thread, inside enter's cgroup when enter
// is set.
func spawn(cmd *exec.Cmd, enter func() (func() error, error)) spawnReply {
	spawnOnce.Do(func() {
		spawnRequests = make(chan spawnRequest)
		for range spawnThreads {
			go spawnLoop(spawnRequests)
		}
	})
	req := spawnRequest{cmd: cmd, enter: enter, reply: make(chan spawnReply, 1)}
	spawnRequests <- req
	return <-req.reply
}

// spawnLoop never unlocks its thread and never returns. Whatever
// capabilities the node holds stay off this thread's inheritable and
// ambient sets (they are per thread), so no job inherits them across exec.
func spawnLoop(reqs <-chan spawnRequest) {
	runtime.LockOSThread()
	dropInheritedCapabilities()
	for req := range reqs {
		req.reply <- startOnThisThread(req)
	}
}

func startOnThisThread(req spawnRequest) spawnReply {
	if req.enter == nil {
		return spawnReply{err: req.cmd.Start()}
	}
	leave, err := req.enter()
	if err != nil {
		return spawnReply{err: err}
	}
	r := spawnReply{err: req.cmd.Start()}
	r.leaveErr = leave()
	return r
}

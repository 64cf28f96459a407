package runner

import (
	"os/exec"
	"runtime"
	"sync"
)

// Linux sends the parent-death signal (Pdeathsig) when the thread that
// forked the child exits, not when the process does. Go may end an OS thread
// at any time (for instance when a goroutine that locked it returns), which
// would SIGKILL a healthy job. So every child is started from one goroutine
// locked to its own thread for the life of the node: that thread ends only
// when the node does, which is exactly when the children must die.

type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

var (
	spawnOnce     sync.Once
	spawnRequests chan spawnRequest
)

// spawn starts cmd on the spawner thread and returns Start's error.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnRequests = make(chan spawnRequest)
		go spawnLoop(spawnRequests)
	})
	req := spawnRequest{cmd: cmd, reply: make(chan error, 1)}
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
		req.reply <- req.cmd.Start()
	}
}

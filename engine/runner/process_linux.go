package runner

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// jobProcAttr puts the job in its own process group and has Linux SIGKILL
// it when the node dies (see spawner.go for why the forking thread matters).
func jobProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until the process pid has exited without reaping it.
func waitExited(pid int) error {
	var info unix.Siginfo
	for {
		// WNOWAIT leaves the process a zombie for cmd.Wait to reap.
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// leaderExited reports, without waiting or reaping, that the process pid
// has exited: waitid with WNOHANG fills in the signal only for a child
// that has.
func leaderExited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

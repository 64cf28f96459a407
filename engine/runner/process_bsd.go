//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package runner

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// jobProcAttr puts the job in its own process group. These systems have
// no parent-death signal that Go can set, so a job outlives a node killed
// with SIGKILL; a clean shutdown still stops it.
func jobProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExited blocks until the process pid has exited without reaping it:
// a kqueue NOTE_EXIT event fires on exit and leaves the zombie for
// cmd.Wait.
func waitExited(pid int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(kq) }()
	var change unix.Kevent_t
	unix.SetKevent(&change, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	change.Fflags = unix.NOTE_EXIT
	events := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, []unix.Kevent_t{change}, events, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ESRCH:
			// Only a process that has already exited is gone this way: it
			// is ours, and nothing but cmd.Wait reaps it.
			return nil
		case err != nil:
			return err
		}
		if n == 1 && events[0].Flags&unix.EV_ERROR != 0 {
			if errno := syscall.Errno(events[0].Data); errno != unix.ESRCH {
				return errno
			}
		}
		return nil
	}
}

// leaderExited is not known here without waiting: a run is taken to be
// alive, so a lapse stops it and it runs again, the safe side.
func leaderExited(int) bool { return false }

// maxRSSBytes is a rusage's largest resident set: bytes on macOS, KiB on
// the BSDs.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}

// processGroupTotals cannot be read here without /proc: a running job's
// use is known once it ends.
func processGroupTotals(map[int]bool) map[int]procTotals { return nil }

package commands

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// hideProcess marks this process non-dumpable. Linux then lets no process
// without CAP_SYS_PTRACE, not even one of the same user (a job run as the
// node's own user), read its /proc/PID/environ, mem, maps or fd, or trace
// it; and it leaves no core dump. Its command line (/proc/PID/cmdline)
// stays readable by everyone.
func hideProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot close this process to other processes of its user (PR_SET_DUMPABLE): %w", err)
	}
	return nil
}

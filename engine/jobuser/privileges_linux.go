package jobuser

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// needed are the capabilities a node uses to run jobs as another user:
// to switch to the user and its groups, to hand the attempt's temporary
// directory to it (and take it back to remove it), and to signal the job's
// processes (pause, resume, cancel, and the watchdog's kill).
var needed = []struct {
	capability int
	name       string
}{
	{unix.CAP_SETUID, "CAP_SETUID"},
	{unix.CAP_SETGID, "CAP_SETGID"},
	{unix.CAP_CHOWN, "CAP_CHOWN"},
	{unix.CAP_KILL, "CAP_KILL"},
}

// CheckPrivileges reports whether this process may run jobs as another
// user: it must hold the capabilities above in its effective set, as root
// does. The error says which are missing, in one line.
func CheckPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("cannot read this process's capabilities: %w", err)
	}
	var missing, all []string
	for _, c := range needed {
		all = append(all, c.name)
		if data[c.capability/32].Effective&(1<<(uint(c.capability)%32)) == 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("running jobs as another user needs root or the capabilities %s; this process (uid %d) lacks %s",
		strings.Join(all, ", "), os.Geteuid(), strings.Join(missing, ", "))
}

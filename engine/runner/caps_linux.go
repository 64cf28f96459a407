package runner

import "golang.org/x/sys/unix"

// dropInheritedCapabilities empties the calling thread's inheritable
// capabilities, and with them its ambient ones. A node that is not root but
// holds capabilities (to run jobs as another user, say) got them as ambient
// ones from systemd (AmbientCapabilities=) or capsh, and Linux passes the
// ambient set on to every program such a thread execs, as long as its user
// is not root: a job switched from one ordinary user to another would keep
// CAP_SETUID. Only the effective and permitted sets, which the node uses
// itself, are kept. A kernel that cannot (no ambient set before 4.3) has
// nothing to pass on.
func dropInheritedCapabilities() {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return
	}
	if data[0].Inheritable != 0 || data[1].Inheritable != 0 {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		_ = unix.Capset(&hdr, &data[0])
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
}

//go:build !linux

package jobuser

import (
	"fmt"
	"os"
)

// CheckPrivileges reports whether this process may run jobs as another
// user: here, only root may.
func CheckPrivileges() error {
	if os.Geteuid() == 0 {
		return nil
	}
	return fmt.Errorf("running jobs as another user needs root; this process runs as uid %d", os.Geteuid())
}

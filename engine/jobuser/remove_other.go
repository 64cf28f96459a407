//go:build !linux

package jobuser

import (
	"os"
	"path/filepath"
)

// removeTree removes parent/name and what it holds; only root runs jobs as
// another user here, and root may.
func removeTree(parent, name string) error {
	return os.RemoveAll(filepath.Join(parent, name))
}

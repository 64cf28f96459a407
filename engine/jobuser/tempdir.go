package jobuser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// TempDirs are the temporary directories of a node's job attempts, in one
// base directory of the node's: BASE/JOB-ATTEMPT-RANDOM, each 0700 and owned
// by the attempt's user. The base is 0711, so a job reaches its own
// directory but cannot list the others.
type TempDirs struct {
	base string
}

// OpenTempDirs makes base, or takes the one there when it is a directory
// of this process's user, and removes what an earlier process of the node
// left in it (its jobs died with it). Jobs of another user must be able to
// pass through every directory above base.
func OpenTempDirs(base string) (*TempDirs, error) {
	base = filepath.Clean(base)
	if !filepath.IsAbs(base) {
		return nil, fmt.Errorf("temporary directory of jobs %q: want an absolute path", base)
	}
	for dir := filepath.Dir(base); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("temporary directory of jobs: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return nil, fmt.Errorf("jobs of another user cannot pass through %s (mode %04o) to their temporary directories in %s; point TMPDIR elsewhere, e.g. /tmp",
				dir, fi.Mode().Perm(), filepath.Dir(base))
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if err := os.Mkdir(base, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("temporary directory of jobs: %w", err)
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return nil, fmt.Errorf("temporary directory of jobs: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("temporary directory of jobs %s is not a directory", base)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("temporary directory of jobs %s belongs to uid %d, not to this process (uid %d)", base, st.Uid, os.Geteuid())
	}
	// Mkdir's mode passed through the umask, and an older base may be wider.
	if err := os.Chmod(base, 0o711); err != nil {
		return nil, fmt.Errorf("temporary directory of jobs: %w", err)
	}
	d := &TempDirs{base: base}
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("temporary directory of jobs: %w", err)
	}
	for _, e := range entries {
		if err := removeTree(base, e.Name()); err != nil {
			return nil, fmt.Errorf("cannot remove %s, left by an earlier run of this node: %w", filepath.Join(base, e.Name()), err)
		}
	}
	return d, nil
}

// Base is the directory that holds the attempts' directories.
func (d *TempDirs) Base() string { return d.base }

// Make creates the empty temporary directory of attempt of job id, run by
// u: mode 0700, owned by u and its primary group.
func (d *TempDirs) Make(u *User, id int64, attempt int) (string, error) {
	dir, err := os.MkdirTemp(d.base, fmt.Sprintf("%d-%d-", id, attempt))
	if err != nil {
		return "", err
	}
	// Nobody else writes to base, so dir is still the directory just made.
	if err := os.Chown(dir, int(u.UID), int(u.GID)); err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// Close removes the base directory when no attempt's directory is left in
// it, as after a clean shutdown.
func (d *TempDirs) Close() {
	_ = os.Remove(d.base)
}

// Remove removes an attempt's directory with everything in it, whatever
// modes its user left there.
func (d *TempDirs) Remove(dir string) error {
	if filepath.Dir(dir) != d.base {
		return fmt.Errorf("%s is not a temporary directory of jobs in %s", dir, d.base)
	}
	return removeTree(d.base, filepath.Base(dir))
}

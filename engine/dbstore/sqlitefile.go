package dbstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jobctl/jobctl/engine"
)

// The SQLite database holds the cluster token, so the file and the -wal and
// -shm files beside it (which hold recent pages) are the user's alone.
const (
	sqliteFileMode fs.FileMode = 0o600
	sqliteDirMode  fs.FileMode = 0o700
)

// NoDatabaseError is an SQLite file that does not exist, opened by a
// command that only reads and so must not create it. It matches
// engine.ErrNotFound.
type NoDatabaseError struct {
	Location string // "sqlite:/path/jobctl.db"
}

func (e *NoDatabaseError) Error() string {
	return fmt.Sprintf("database %s does not exist", e.Location)
}

// Is lets errors.Is(err, engine.ErrNotFound) match.
func (e *NoDatabaseError) Is(target error) bool { return target == engine.ErrNotFound }

// prepareSQLiteFile makes the database file ready to open. With create it
// creates the file's directories (0700) and the file (0600) when missing;
// without, a missing file is a *NoDatabaseError and nothing is created.
// A file, -wal or -shm file that exists with looser permissions is
// tightened to 0600, and warn is told once.
//
// Of the directories, only jobctl's own state directory (where the default
// database lives) is tightened when found looser. The directory of a path
// the operator chose may be shared on purpose — /tmp, a project directory,
// a group's directory — and changing its mode would break other users of
// it; the files inside are protected by their own mode anyway.
func prepareSQLiteFile(path string, create bool, warn func(string)) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		// Never chmod a directory or device named by mistake (sqlite:/tmp).
		return fmt.Errorf("%s is not a file (%s)", path, fi.Mode().Type())
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return &NoDatabaseError{Location: "sqlite:" + path}
		}
		if err := os.MkdirAll(filepath.Dir(path), sqliteDirMode); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, sqliteFileMode)
		if err == nil {
			err = f.Close()
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else if err != nil {
		return err
	}
	var tightened []string
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		was, changed, err := tighten(p, sqliteFileMode, p == path)
		if err != nil {
			return err
		}
		if changed {
			tightened = append(tightened, fmt.Sprintf("%s (was %04o)", p, was))
		}
	}
	if dir := filepath.Dir(path); isStateDir(dir) {
		was, changed, err := tighten(dir, sqliteDirMode, true)
		if err != nil {
			return err
		}
		if changed {
			tightened = append(tightened, fmt.Sprintf("%s (was %04o)", dir, was))
		}
	}
	if len(tightened) > 0 && warn != nil {
		warn(fmt.Sprintf("the database holds the cluster token but other users could read it; made private: %s",
			strings.Join(tightened, ", ")))
	}
	return nil
}

// tighten removes from the regular file or directory at p every permission
// bit beyond max. A missing file is left missing, and anything else left
// alone. With follow a symbolic link at p is followed: the database named,
// or jobctl's state directory, may be links to where they really live; a
// link in place of a -wal or -shm file is no file of SQLite's.
func tighten(p string, max fs.FileMode, follow bool) (was fs.FileMode, changed bool, err error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return fi.Mode().Perm(), false, nil
	}
	was = fi.Mode().Perm()
	if was&^max == 0 {
		return was, false, nil
	}
	if err := os.Chmod(p, was&max); err != nil {
		return was, false, fmt.Errorf("cannot make %s private (mode %04o): %w", p, was, err)
	}
	return was, true, nil
}

// isStateDir reports whether dir is jobctl's own state directory, the one
// DefaultPath puts the database in.
func isStateDir(dir string) bool {
	state := filepath.Dir(DefaultPath())
	if state == "." {
		return false // no home directory: the working directory, not ours
	}
	a, errA := filepath.Abs(dir)
	b, errB := filepath.Abs(state)
	return errA == nil && errB == nil && a == b
}

package commands

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxDBFile bounds what is read of a file that names the database.
const maxDBFile = 64 << 10

// readDBFile reads the database address from path (--db-file or
// JOBCTL_DB_FILE, named by source): its one line that is neither blank nor
// a # comment. The file must be readable by its owner alone, as it may hold
// a password; anything else is a usage error and nothing is opened.
func readDBFile(path, source string) (DBChoice, error) {
	fail := func(format string, args ...any) (DBChoice, error) {
		return DBChoice{}, &UsageError{Err: fmt.Errorf(source+" %s: "+format, append([]any{path}, args...)...)}
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("no such file")
	case err != nil:
		return fail("%v", unwrapPathError(err))
	case !fi.Mode().IsRegular():
		return fail("not a regular file")
	case fi.Mode().Perm()&0o077 != 0:
		return fail("its group or others may read or write it (mode %04o), and it may hold the database's password; make it private: chmod 600 %s",
			fi.Mode().Perm(), path)
	}
	dsn, err := readDSN(path)
	if err != nil {
		return fail("%v", err)
	}
	return DBChoice{DSN: dsn, Source: source, Path: path}, nil
}

// credentialDB reads the systemd credential jobctl-db when the process has
// credentials ($CREDENTIALS_DIRECTORY, set by systemd for the unit's
// processes alone) and that one among them; ok is false without it.
func credentialDB() (c DBChoice, ok bool, err error) {
	dir := os.Getenv("CREDENTIALS_DIRECTORY")
	if dir == "" {
		return c, false, nil
	}
	path := filepath.Join(dir, DBCredential)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	dsn, err := readDSN(path)
	if err != nil {
		return c, true, &UsageError{Err: fmt.Errorf("systemd credential %s (%s): %v", DBCredential, path, err)}
	}
	return DBChoice{DSN: dsn, Source: DBFromCredential, Path: path}, true, nil
}

// readDSN is the one line of path that is neither blank nor a comment.
func readDSN(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", unwrapPathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDBFile+1))
	if err != nil {
		return "", unwrapPathError(err)
	}
	if len(data) > maxDBFile {
		return "", fmt.Errorf("larger than %d KiB: it should hold one database address", maxDBFile>>10)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxDBFile+1)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	switch len(lines) {
	case 0:
		return "", errors.New("holds no database address (one line: sqlite:PATH, postgres://... or mysql://...)")
	case 1:
		return lines[0], nil
	}
	return "", fmt.Errorf("holds %d lines besides comments; want one, the database address", len(lines))
}

// unwrapPathError drops the path a *fs.PathError repeats.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

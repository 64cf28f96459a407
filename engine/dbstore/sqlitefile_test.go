package dbstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func permOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// MustExist opens no database that is not there, and creates nothing.
func TestOpenMustExistCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "jobctl.db")
	_, err := OpenWith(t.Context(), "sqlite:"+path, OpenOptions{MustExist: true})
	var missing *NoDatabaseError
	if !errors.As(err, &missing) || !errors.Is(err, engine.ErrNotFound) || missing.Location != "sqlite:"+path {
		t.Fatalf("OpenWith MustExist on a missing file: %v; want a NoDatabaseError naming it", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory was created (%v)", err)
	}
}

// A database file, -wal or -shm file readable by others is made 0600 with
// one warning; a directory the operator chose keeps its mode, jobctl's own
// state directory is made 0700.
func TestOpenTightensLooseSQLiteFiles(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{shared, filepath.Join(state, "jobctl")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "jobctl.db")
		for _, f := range []string{path, path + "-wal"} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var warnings []string
		s, err := OpenWith(t.Context(), "sqlite:"+path, OpenOptions{Warn: func(m string) { warnings = append(warnings, m) }})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if len(warnings) != 1 || !strings.Contains(warnings[0], path+" (was 0644)") || !strings.Contains(warnings[0], path+"-wal (was 0644)") {
			t.Errorf("%s: warnings %q; want one naming the file and its -wal", dir, warnings)
		}
		if m := permOf(t, path); m != 0o600 {
			t.Errorf("%s: the database file has mode %04o, want 0600", dir, m)
		}
		wantDir := fs.FileMode(0o755)
		if dir != shared {
			wantDir = 0o700
		}
		if m := permOf(t, dir); m != wantDir {
			t.Errorf("%s: the directory has mode %04o, want %04o", dir, m, wantDir)
		}
		warnings = nil
		s, err = OpenWith(t.Context(), "sqlite:"+path, OpenOptions{Warn: func(m string) { warnings = append(warnings, m) }})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if len(warnings) != 0 {
			t.Errorf("%s: warnings on a private file: %q", dir, warnings)
		}
	}
}

// A path naming a directory is refused, and its mode left as it was.
func TestOpenSQLiteDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mustExist := range []bool{false, true} {
		if _, err := OpenWith(t.Context(), "sqlite:"+dir, OpenOptions{MustExist: mustExist}); err == nil || !strings.Contains(err.Error(), "not a file") {
			t.Errorf("MustExist %v: opening a directory: %v; want it refused", mustExist, err)
		}
	}
	if m := permOf(t, dir); m != 0o755 {
		t.Errorf("the directory's mode became %04o", m)
	}
}

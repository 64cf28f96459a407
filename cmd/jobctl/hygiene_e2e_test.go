package main_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oneLine fails the test unless stderr is exactly one line holding every
// one of want.
func oneLine(t *testing.T, what string, r result, code int, want ...string) {
	t.Helper()
	ok := r.code == code && strings.Count(r.stderr, "\n") == 1 && strings.HasSuffix(r.stderr, "\n")
	for _, w := range want {
		ok = ok && strings.Contains(r.stderr, w)
	}
	if !ok {
		t.Errorf("%s: exit %d, stderr %q; want exit %d and one line with %q", what, r.code, r.stderr, code, want)
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// The SQLite file holds the cluster token: it, and the -wal and -shm files
// SQLite keeps beside it, are the user's alone, and a file found readable
// by others is made private with one warning.
func TestSQLiteFilesArePrivate(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	path := strings.TrimPrefix(c.dsn, "sqlite:")
	c.ok("db", "migrate")
	if m := mode(t, path); m != 0o600 {
		t.Fatalf("a new database file has mode %04o, want 0600", m)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r := c.run("list", "-q")
	oneLine(t, "list on a 0644 database", r, 0, "warning", path, "was 0644")
	if m := mode(t, path); m != 0o600 {
		t.Errorf("after list the database file has mode %04o, want 0600", m)
	}
	if r := c.run("list", "-q"); r.code != 0 || r.stderr != "" {
		t.Errorf("list on the private file: exit %d, stderr %q; want no warning", r.code, r.stderr)
	}

	// A running node keeps the -wal and -shm files open, and so present.
	c.serve("n1")
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if m := mode(t, f); m != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", f, m)
		}
	}
	if err := os.Chmod(path+"-wal", 0o644); err != nil {
		t.Fatal(err)
	}
	r = c.run("list", "-q")
	oneLine(t, "list with a 0644 -wal file", r, 0, "warning", path+"-wal (was 0644)")
	if m := mode(t, path+"-wal"); m != 0o600 {
		t.Errorf("after list the -wal file has mode %04o, want 0600", m)
	}
}

// A command that only reads never creates the database it is pointed at:
// a mistyped --db leaves nothing behind, and says how to create one.
func TestInspectionCommandsCreateNoDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "dir", "x.db")
	c := &cluster{t: t, dsn: "sqlite:" + missing}
	for _, args := range [][]string{
		{"list"}, {"show", "1"}, {"logs", "1"}, {"nodes"}, {"nodes", "list"}, {"lease"}, {"lease", "show"},
		{"explain", "1"}, {"stats"}, {"wait", "1"}, {"schedules"}, {"schedules", "show", "x"}, {"limits"},
		{"limits", "ls"}, {"workflow"}, {"workflow", "list"}, {"workflow", "show", "1"},
	} {
		r := c.run(args...)
		oneLine(t, strings.Join(args, " "), r, 3, "database sqlite:"+missing+" does not exist", "jobctl db migrate")
	}
	// db status reports such a database with every migration pending.
	if r := c.run("db", "status"); r.code != 0 || !strings.Contains(r.stderr, "does not exist yet") || !strings.Contains(r.stdout, "1\tinit\tpending\n") {
		t.Errorf("db status on a missing database: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the inspection commands created %s (%v)", filepath.Join(dir, "missing"), err)
	}
	// Writing commands create it on first use.
	c.submit("--hold", "--type", "noop")
	if ids := strings.TrimSpace(c.ok("list", "-q")); ids != "1" {
		t.Errorf("list after the first submit: %q; want job 1", ids)
	}

	for name, newCluster := range map[string]func(*testing.T) *cluster{"postgres": postgresCluster, "mariadb": mysqlCluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t)
			oneLine(t, "list on a database without jobctl's tables", c.run("list"), 3, "has no jobctl tables", "jobctl db migrate")
			oneLine(t, "nodes on a database without jobctl's tables", c.run("nodes"), 3, "has no jobctl tables")
			var ms []struct {
				Version   int     `json:"version"`
				AppliedAt *string `json:"applied_at"`
			}
			if err := json.Unmarshal([]byte(c.ok("db", "status", "-o", "json")), &ms); err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.AppliedAt != nil {
					t.Errorf("migration %d applied by an inspection command", m.Version)
				}
			}
		})
	}
}

// A --db or --listen that cannot be right is a usage error (exit 2), one
// line, before anything is created.
func TestMalformedDatabaseAndListenExitUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &cluster{t: t, dsn: "sqlite:" + filepath.Join(dir, "jobctl.db")}
	for _, dsn := range []string{"nosuchdb:x", "sqlite://x", "sqlite::memory:", "postgres://a b@%zz/x", "mysql://root@127.0.0.1/", "postgres://db/x?pool_max_conns=0", "nothing"} {
		oneLine(t, "--db "+dsn, c.run("--db", dsn, "list"), 2, "database")
		oneLine(t, "--db "+dsn+" submit", c.run("--db", dsn, "submit", "--type", "noop"), 2, "database")
	}
	bad := &cluster{t: t, dsn: "nosuchdb:x"}
	oneLine(t, "JOBCTL_DB=nosuchdb:x", bad.run("list"), 2, "nosuchdb")
	for _, listen := range []string{"notahostport", "127.0.0.1:99999", "127.0.0.1:http", "127.0.0.1"} {
		oneLine(t, "--listen "+listen, c.run("serve", "--listen", listen, "--exec"), 2, "--listen")
	}
	oneLine(t, "--node of 256 bytes", c.run("serve", "--node", strings.Repeat("n", 256), "--listen", "127.0.0.1:0"), 2, "--node")
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("refused command lines left %d files in the database's directory (%v)", len(entries), err)
	}
}

// Only what follows -- is a job's command; without it, submit refuses the
// command line and creates nothing.
func TestSubmitWithoutDashIsAUsageError(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.ok("db", "migrate")
	for _, args := range [][]string{{"submit", "true"}, {"submit", "--type", "noop", "a.mp4"}, {"submit", "--wait", "make", "--", "test"}} {
		oneLine(t, strings.Join(args, " "), c.run(args...), 2, "jobctl submit [flags] -- ARGS")
	}
	if ids := strings.TrimSpace(c.ok("list", "-q")); ids != "" {
		t.Fatalf("refused submissions created jobs %q", ids)
	}
	id := c.submit("--hold", "--", "true")
	if j := c.show(id); j.Type != "exec" {
		t.Errorf("submit -- true made a job of type %q, want exec", j.Type)
	}
	id = c.submit("--hold", "--type", "encode", "--", "a.mp4")
	if j := c.show(id); j.Type != "encode" {
		t.Errorf("submit --type encode -- a.mp4 made a job of type %q", j.Type)
	}
}

// Over a limit every backend refuses a job with the very same line, exit 2,
// and writes nothing: the limits are the engine's, not the columns'.
func TestOverLimitSubmitIsTheSameOnEveryBackend(t *testing.T) {
	t.Parallel()
	backends := map[string]func(*testing.T) *cluster{"sqlite": sqliteCluster, "postgres": postgresCluster, "mariadb": mysqlCluster}
	for what, args := range map[string][]string{
		"key":     {"--key", strings.Repeat("k", 256), "--type", "noop"},
		"type":    {"--type", strings.Repeat("ü", 256)},
		"payload": {"--type", "noop", "--payload", "\"\xff\""},
		"load":    {"--type", "noop", "--load", "1e10"},
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			lines := map[string][]string{}
			for name, newCluster := range backends {
				c := newCluster(t)
				r := c.run(append([]string{"submit"}, args...)...)
				oneLine(t, name, r, 2, "invalid job")
				if r.stdout != "" {
					t.Errorf("%s: stdout %q; want none", name, r.stdout)
				}
				lines[r.stderr] = append(lines[r.stderr], name)
				if ids := strings.TrimSpace(c.ok("list", "-q")); ids != "" {
					t.Errorf("%s: the refused submit created jobs %q", name, ids)
				}
			}
			if len(lines) != 1 {
				t.Errorf("the backends answer differently: %q", lines)
			}
		})
	}
}

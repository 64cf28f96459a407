package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestDBMigrateAndStatus(t *testing.T) {
	ios, stdout, _ := TestIO("")
	f := NewFactory(ios)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "sub", "jobctl.db")
	f.DSN = func() string { return dsn }
	t.Cleanup(func() { _ = f.Close() })
	run := func(args ...string) {
		t.Helper()
		stdout.Reset()
		root := NewRootCmd(f, "test")
		root.SetArgs(args)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}

	// A fresh database: db status must not migrate it behind the operator's back.
	run("db", "status", "-o", "json")
	var ms []engine.Migration
	if err := json.Unmarshal(stdout.Bytes(), &ms); err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("db status lists no migrations")
	}
	for _, m := range ms {
		if m.AppliedAt != nil {
			t.Errorf("migration %d applied before db migrate", m.Version)
		}
	}

	run("db", "status")
	if !strings.Contains(stdout.String(), "\tpending\n") {
		t.Errorf("db status = %q; want pending migrations", stdout.String())
	}
	if _, err := os.Stat(filepath.Dir(strings.TrimPrefix(dsn, "sqlite:"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("db status created the database's directory (%v)", err)
	}

	run("db", "migrate")
	if !strings.HasPrefix(stdout.String(), "applied ") {
		t.Errorf("db migrate = %q; want the count applied", stdout.String())
	}
	run("db", "migrate")
	if !strings.Contains(stdout.String(), "up to date") {
		t.Errorf("second db migrate = %q; want up to date", stdout.String())
	}
	run("db", "status", "-o", "json")
	if err := json.Unmarshal(stdout.Bytes(), &ms); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.AppliedAt == nil {
			t.Errorf("migration %d pending after db migrate", m.Version)
		}
	}
}

// A command that writes creates and migrates the database on first use; one
// that only reads refuses a database that does not exist, and creates none.
func TestStoreMigratesOnFirstUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "jobctl.db")
	dsn := "sqlite:" + path
	run := func(args ...string) (string, error) {
		t.Helper()
		ios, stdout, _ := TestIO("")
		f := NewFactory(ios)
		f.DSN = func() string { return dsn }
		defer f.Close()
		root := NewRootCmd(f, "test")
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		return stdout.String(), err
	}
	for _, args := range [][]string{{"list", "-o", "json"}, {"events"}} {
		_, err := run(args...)
		var missing *NoDatabaseError
		if !errors.As(err, &missing) || !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "jobctl db migrate") {
			t.Fatalf("%s on a database that does not exist: %v; want a NoDatabaseError naming 'jobctl db migrate'", args[0], err)
		}
		if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s created the database's directory (%v)", args[0], err)
		}
	}
	// A script polling for its first node before the node has made the
	// database reads an empty list, and the error says why.
	out, err := run("nodes", "-o", "json")
	var missing *NoDatabaseError
	if !errors.As(err, &missing) || strings.TrimSpace(out) != "[]" {
		t.Errorf("nodes -o json on a database that does not exist = %q, %v; want [] and a NoDatabaseError", out, err)
	}
	if _, err := run("submit", "--hold", "--type", "noop"); err != nil {
		t.Fatalf("submit on a fresh database: %v", err)
	}
	out, err = run("list", "-q")
	if err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("list after the first submit = %q, %v; want job 1", out, err)
	}
}

func TestDSNPrecedence(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	config := filepath.Join(t.TempDir(), "config.yaml")
	f.ConfigPath = func() string { return config }
	t.Setenv("JOBCTL_DB", "")
	t.Setenv("XDG_STATE_HOME", "/state")
	check := func(what, dsn, source string) {
		t.Helper()
		c, err := f.DBChoice()
		if err != nil || c.DSN != dsn || c.Source != source || f.DSN() != dsn {
			t.Errorf("%s: %+v, %v, DSN %q; want %q from %s", what, c, err, f.DSN(), dsn, source)
		}
	}
	check("no config file", "sqlite:/state/jobctl/jobctl.db", DBFromDefault)
	writeConfig(t, config, "# nothing set\n")
	check("a config file without db", "sqlite:/state/jobctl/jobctl.db", DBFromDefault)
	writeConfig(t, config, "db: sqlite:/config.db\nservices:\n  encode:\n    command: [encode]\n")
	check("a config file with db", "sqlite:/config.db", DBFromConfig)
	if c, _ := f.DBChoice(); c.Path != config {
		t.Errorf("config choice names %q; want the file %q", c.Path, config)
	}
	t.Setenv("JOBCTL_DB", "sqlite:/env.db")
	check("JOBCTL_DB", "sqlite:/env.db", DBFromEnv)
	root := NewRootCmd(f, "test")
	if err := root.ParseFlags([]string{"--db", "sqlite:/flag.db"}); err != nil {
		t.Fatal(err)
	}
	check("--db", "sqlite:/flag.db", DBFromFlag)
}

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestXDGConfigPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/conf")
	if got := UserConfigPath(); got != "/conf/jobctl/config.yaml" {
		t.Errorf("with XDG_CONFIG_HOME: %q", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if got := UserConfigPath(); got != "/home/u/.config/jobctl/config.yaml" {
		t.Errorf("with a relative XDG_CONFIG_HOME: %q; want it ignored", got)
	}
}

func TestBadConfigFileIsReported(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	config := filepath.Join(t.TempDir(), "config.yaml")
	f.ConfigPath = func() string { return config }
	t.Setenv("JOBCTL_DB", "")
	writeConfig(t, config, "database: sqlite:/x.db\n")
	root := NewRootCmd(f, "test")
	root.SetArgs([]string{"list"})
	err := root.ExecuteContext(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "config file "+config+": ") ||
		!strings.Contains(err.Error(), "field database not found") || !strings.HasSuffix(err.Error(), "(it may set db, services and preferred)") {
		t.Errorf("list with a bad config file: %v; want the file and the problem named", err)
	}
}

// dbStatusEnv is a factory whose database is chosen as a user would: by
// flag, environment, config file or default, never by replacing DSN.
func dbStatusEnv(t *testing.T) (f *Factory, stdout, stderr *bytes.Buffer, dir string) {
	t.Helper()
	ios, stdout, stderr := TestIO("")
	f = NewFactory(ios)
	dir = t.TempDir()
	f.ConfigPath = func() string { return filepath.Join(dir, "config.yaml") }
	t.Setenv("JOBCTL_DB", "")
	t.Setenv("XDG_STATE_HOME", dir)
	t.Cleanup(func() { _ = f.Close() })
	return f, stdout, stderr, dir
}

// notYet ends the database line of db status for a file not created yet.
const notYet = "; it does not exist yet: 'jobctl db migrate' creates it"

func TestDBStatusNamesTheDatabase(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string) []string // returns extra args
		want  func(dir string) string
	}{
		{"default", func(*testing.T, string) []string { return nil },
			func(dir string) string { return "database: sqlite:" + dir + "/jobctl/jobctl.db (default)\n" }},
		{"config", func(t *testing.T, dir string) []string {
			writeConfig(t, filepath.Join(dir, "config.yaml"), "db: sqlite:"+dir+"/c.db\n")
			return nil
		}, func(dir string) string {
			return "database: sqlite:" + dir + "/c.db (from config file " + dir + "/config.yaml)\n"
		}},
		{"env", func(t *testing.T, dir string) []string {
			t.Setenv("JOBCTL_DB", "sqlite:"+dir+"/e.db")
			return nil
		}, func(dir string) string { return "database: sqlite:" + dir + "/e.db (from $JOBCTL_DB)\n" }},
		{"flag", func(t *testing.T, dir string) []string { return []string{"--db", "sqlite:" + dir + "/f.db"} },
			func(dir string) string { return "database: sqlite:" + dir + "/f.db (from --db)\n" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, stdout, stderr, dir := dbStatusEnv(t)
			args := append([]string{"db", "status"}, c.setup(t, dir)...)
			root := NewRootCmd(f, "test")
			root.SetArgs(args)
			if err := root.ExecuteContext(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Piped, stdout keeps the table, under its header; the database
			// is named on stderr.
			if got, want := stderr.String(), strings.Replace(c.want(dir), ")\n", notYet+")\n", 1); got != want {
				t.Errorf("stderr %q; want %q", got, want)
			}
			if !strings.HasPrefix(stdout.String(), "VERSION\tNAME\tAPPLIED\n1\tinit\tpending\n") {
				t.Errorf("stdout %q; want the header and the migration rows", stdout.String())
			}
		})
	}
}

func TestDBStatusOnATerminal(t *testing.T) {
	f, stdout, stderr, dir := dbStatusEnv(t)
	f.IO.OutIsTerminal, f.IO.NoColor = true, true
	root := NewRootCmd(f, "test")
	root.SetArgs([]string{"db", "status"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "database: sqlite:" + dir + "/jobctl/jobctl.db (default" + notYet + ")\n\nVERSION"
	if !strings.HasPrefix(stdout.String(), want) || stderr.String() != "" {
		t.Errorf("stdout %q, stderr %q; want it to start %q", stdout.String(), stderr.String(), want)
	}
}

func TestDBStatusHidesThePassword(t *testing.T) {
	f, _, stderr, _ := dbStatusEnv(t)
	// Trust authentication: the password is accepted and ignored, which is
	// what lets the test see that it is not shown.
	dsn := "postgres://postgres:s3cret@127.0.0.1:5432/postgres?sslmode=disable&application_name=x"
	root := NewRootCmd(f, "test")
	root.SetArgs([]string{"db", "status", "--db", dsn, "-o", "json"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("db status on PostgreSQL (needed at 127.0.0.1:5432): %v", err)
	}
	if got, want := stderr.String(), "database: postgres://postgres@127.0.0.1:5432/postgres (from --db)\n"; got != want {
		t.Errorf("stderr %q; want %q", got, want)
	}
}

func TestServeConfigSetsTheDatabase(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	dir := t.TempDir()
	f.ConfigPath = func() string { return filepath.Join(dir, "user.yaml") }
	writeConfig(t, filepath.Join(dir, "user.yaml"), "db: sqlite:/user.db\n")
	serveConfig := filepath.Join(dir, "serve.yaml")
	writeConfig(t, serveConfig, "db: sqlite:/serve.db\nservices:\n  encode:\n    command: encode --fast\n")
	t.Setenv("JOBCTL_DB", "")
	var got *ServeOptions
	cmd := NewCmdServe(f, func(o *ServeOptions) error { got = o; return nil })
	if err := execParse(cmd, "--config", serveConfig); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.DBChoice(); c.DSN != "sqlite:/serve.db" || c.Path != serveConfig || len(got.Config.Services) != 1 {
		t.Errorf("serve --config: %+v, services %v; want the file's db and service", c, got.Config.Services)
	}
	t.Setenv("JOBCTL_DB", "sqlite:/env.db")
	if f.DSN() != "sqlite:/env.db" {
		t.Errorf("JOBCTL_DB beside serve --config: %q; want JOBCTL_DB first", f.DSN())
	}
}

// Not parallel: it sets the process's environment.
func TestDSNFromFilesAndCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagFile := write("flag", "# the cluster's database\n\n  sqlite:/flag-file.db  \n", 0o600)
	envFile := write("env", "sqlite:/env-file.db\n", 0o400)
	creds := filepath.Join(dir, "credentials")
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join("credentials", DBCredential), "sqlite:/credential.db", 0o400)
	t.Setenv("JOBCTL_DB", "")
	t.Setenv("JOBCTL_DB_FILE", "")
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	t.Setenv("XDG_STATE_HOME", "/state")

	choose := func(args ...string) (DBChoice, error) {
		t.Helper()
		ios, _, _ := TestIO("")
		f := NewFactory(ios)
		f.ConfigPath = func() string { return "" }
		if err := NewRootCmd(f, "test").ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		return f.DBChoice()
	}
	check := func(what, dsn, source, path string, args ...string) {
		t.Helper()
		c, err := choose(args...)
		if err != nil || c.DSN != dsn || c.Source != source || c.Path != path {
			t.Errorf("%s: %+v, %v; want %q from %s %s", what, c, err, dsn, source, path)
		}
	}
	check("the credential", "sqlite:/credential.db", DBFromCredential, filepath.Join(creds, DBCredential))
	t.Setenv("JOBCTL_DB_FILE", envFile)
	check("JOBCTL_DB_FILE", "sqlite:/env-file.db", DBFromFileEnv, envFile)
	check("--db-file", "sqlite:/flag-file.db", DBFromFileFlag, flagFile, "--db-file", flagFile)
	check("--db", "sqlite:/flag.db", DBFromFlag, "", "--db", "sqlite:/flag.db")

	usage := func(what, want string, args ...string) {
		t.Helper()
		_, err := choose(args...)
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a usage error saying %q", what, err, want)
		}
	}
	usage("--db and --db-file", "give one of them", "--db", "sqlite:/x.db", "--db-file", flagFile)
	t.Setenv("JOBCTL_DB", "sqlite:/env.db")
	usage("JOBCTL_DB and JOBCTL_DB_FILE", "unset one of them")
	t.Setenv("JOBCTL_DB", "")
	for name, tc := range map[string]struct {
		body string
		mode os.FileMode
		want string
	}{
		"group-readable": {"sqlite:/x.db\n", 0o640, "mode 0640"},
		"world-readable": {"sqlite:/x.db\n", 0o604, "chmod 600"},
		"group-writable": {"sqlite:/x.db\n", 0o620, "mode 0620"},
		"empty":          {"# nothing\n\n", 0o600, "holds no database address"},
		"two lines":      {"sqlite:/a.db\nsqlite:/b.db\n", 0o600, "holds 2 lines"},
	} {
		usage(name, tc.want, "--db-file", write(name, tc.body, tc.mode))
	}
	usage("missing", "no such file", "--db-file", filepath.Join(dir, "missing"))
	usage("a directory", "not a regular file", "--db-file", creds)
	write(filepath.Join("credentials", DBCredential), "", 0o400)
	t.Setenv("JOBCTL_DB_FILE", "")
	usage("an empty credential", "systemd credential jobctl-db")
}

// serve pins the database it opened: the variables it came from may go.
// Not parallel: it sets the process's environment.
func TestServePinsItsDatabase(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	t.Setenv("JOBCTL_DB", "sqlite:/pinned.db")
	if err := f.pinDB(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOBCTL_DB", "")
	if c, err := f.DBChoice(); err != nil || c.DSN != "sqlite:/pinned.db" || c.Source != DBFromEnv {
		t.Errorf("after JOBCTL_DB went: %+v, %v; want the pinned choice", c, err)
	}
}

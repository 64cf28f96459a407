package dbstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/jobctl/jobctl/engine"
)

func TestParseDSN(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	t.Setenv("PGSSLMODE", "")
	home, _ := os.UserHomeDir()
	for _, tc := range []struct {
		dsn         string
		dialect     string
		sqlitePath  string
		driverHas   []string
		display     string
		errContains []string
	}{
		{dsn: "sqlite:", dialect: "sqlite", sqlitePath: "/state/jobctl/jobctl.db", display: "sqlite:/state/jobctl/jobctl.db",
			driverHas: []string{"_txlock=immediate", "_busy_timeout=", "_journal_mode=WAL", "_foreign_keys=1"}},
		{dsn: "sqlite:/var/lib/jobctl/x.db", dialect: "sqlite", sqlitePath: "/var/lib/jobctl/x.db"},
		{dsn: "sqlite:rel/x.db", dialect: "sqlite", sqlitePath: "rel/x.db"},
		{dsn: "SQLite:x.db", dialect: "sqlite", sqlitePath: "x.db"},
		{dsn: "sqlite:~/x.db", dialect: "sqlite", sqlitePath: filepath.Join(home, "x.db")},
		{dsn: "postgres://u:pw@db.example:5433/jobs?sslmode=require", dialect: "postgres",
			display: "postgres://u@db.example:5433/jobs", driverHas: []string{"sslmode=require", "u:pw@"}},
		{dsn: "postgresql://u@db/jobs", dialect: "postgres", display: "postgresql://u@db/jobs",
			driverHas: []string{"sslmode=prefer", "binary_parameters=yes"}},
		{dsn: "postgres://u@db/jobs?binary_parameters=no", dialect: "postgres", driverHas: []string{"binary_parameters=no"}},

		{dsn: "sqlite://x.db", errContains: []string{"sqlite:PATH"}},
		{dsn: "sqlite::memory:", errContains: []string{"file path"}},
		{dsn: "sqlite:x.db?mode=ro", errContains: []string{"'?'"}},
		{dsn: "mysql://root:pw@db.example/jobs?tls=skip-verify", dialect: "mysql", display: "mysql://root@db.example/jobs",
			driverHas: []string{"root:pw@tcp(db.example:3306)/jobs", "parseTime=true", "clientFoundRows=true", "multiStatements=true", "tls=skip-verify"}},
		{dsn: "mysql://u:p%40ss%3Aw%2Frd@[::1]:3307/jobs", dialect: "mysql", display: "mysql://u@[::1]:3307/jobs",
			driverHas: []string{"u:p@ss:w/rd@tcp([::1]:3307)/jobs"}},
		{dsn: "mysql://root@127.0.0.1", errContains: []string{"name one database"}},
		{dsn: "mysql://root:secret@127.0.0.1/db?parseTime=maybe", errContains: []string{"maybe"}},
		{dsn: "/var/lib/x.db", errContains: []string{"no scheme", "sqlite:PATH", "postgres://"}},
		{dsn: "redis://h", errContains: []string{"unknown kind", "sqlite:PATH"}},
		{dsn: "postgres:///jobs", errContains: []string{"no host"}},
		{dsn: "postgres://u:secret@h:notaport/db", errContains: []string{"invalid port"}},
	} {
		got, err := parseDSN(tc.dsn)
		if len(tc.errContains) > 0 {
			if err == nil {
				t.Errorf("%s: accepted, want an error", tc.dsn)
				continue
			}
			for _, want := range tc.errContains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q does not say %q", tc.dsn, err, want)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: error %q shows the password", tc.dsn, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.dsn, err)
			continue
		}
		if got.dialect.name != tc.dialect || got.sqlitePath != tc.sqlitePath {
			t.Errorf("%s: dialect %s path %q, want %s %q", tc.dsn, got.dialect.name, got.sqlitePath, tc.dialect, tc.sqlitePath)
		}
		if tc.display != "" && got.display != tc.display {
			t.Errorf("%s: display %q, want %q", tc.dsn, got.display, tc.display)
		}
		for _, want := range tc.driverHas {
			if !strings.Contains(got.driverDSN, want) {
				t.Errorf("%s: driver DSN %q lacks %q", tc.dsn, got.driverDSN, want)
			}
		}
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if got := DefaultPath(); got != "/xdg/state/jobctl/jobctl.db" {
		t.Errorf("with XDG_STATE_HOME: %s", got)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/op")
	if got := DefaultPath(); got != "/home/op/.local/state/jobctl/jobctl.db" {
		t.Errorf("with a relative XDG_STATE_HOME: %s", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if got := DefaultPath(); got != "/home/op/.local/state/jobctl/jobctl.db" {
		t.Errorf("without XDG_STATE_HOME: %s", got)
	}
}

func TestOpenUnreachablePostgres(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback refuses at once.
	_, err := Open(t.Context(), "postgres://bob:s3cret@127.0.0.1:1/jobs?sslmode=disable&connect_timeout=5")
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	msg := err.Error()
	if !strings.Contains(msg, "postgres://bob@127.0.0.1:1/jobs") || strings.Contains(msg, "s3cret") {
		t.Errorf("error %q should name the database without its password", msg)
	}
	if !strings.Contains(msg, "refused") {
		t.Errorf("error %q should give the cause", msg)
	}
}

func TestOpenSQLiteUnwritableDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), "sqlite:"+filepath.Join(blocker, "sub", "jobctl.db"))
	if err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("Open under a file = %v, want an error naming the path", err)
	}
}

// TestMySQLDriverReadsPassword: the DSN handed to the driver gives back the
// very password of the URL, however many separators it holds.
func TestMySQLDriverReadsPassword(t *testing.T) {
	tgt, err := parseDSN("mysql://u:p%40ss%3Aw%2Frd@db.example/jobs")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(tgt.driverDSN)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "u" || cfg.Passwd != "p@ss:w/rd" || cfg.DBName != "jobs" || cfg.Addr != "db.example:3306" {
		t.Errorf("driver reads user %q password %q db %q addr %q", cfg.User, cfg.Passwd, cfg.DBName, cfg.Addr)
	}
}

// TestParseDSNPoolMaxConns: pool_max_conns sets the process's connection
// budget, is taken out of what the driver sees, and a bad value is a usage
// error (exit 2) that does not show the password.
func TestParseDSNPoolMaxConns(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	for _, tc := range []struct {
		dsn  string
		want int
	}{
		{"sqlite:x.db", DefaultMaxConns},
		{"postgres://u@db/jobs", DefaultMaxConns},
		{"postgres://u@db/jobs?pool_max_conns=3&sslmode=require", 3},
		{"mysql://u@db/jobs", DefaultMaxConns},
		{"mysql://u@db/jobs?tls=skip-verify&pool_max_conns=1000", 1000},
	} {
		got, err := parseDSN(tc.dsn)
		if err != nil {
			t.Errorf("%s: %v", tc.dsn, err)
			continue
		}
		if got.maxConns != tc.want {
			t.Errorf("%s: pool of %d, want %d", tc.dsn, got.maxConns, tc.want)
		}
		if strings.Contains(got.driverDSN, "pool_max_conns") {
			t.Errorf("%s: driver DSN %q still has pool_max_conns", tc.dsn, got.driverDSN)
		}
	}
	for _, dsn := range []string{
		"postgres://u:secret@db/jobs?pool_max_conns=0",
		"postgres://u:secret@db/jobs?pool_max_conns=2",
		"postgres://u:secret@db/jobs?pool_max_conns=-1",
		"postgres://u:secret@db/jobs?pool_max_conns=",
		"postgres://u:secret@db/jobs?pool_max_conns=ten",
		"postgres://u:secret@db/jobs?pool_max_conns=1001",
		"postgres://u:secret@db/jobs?pool_max_conns=2&pool_max_conns=3",
		"mysql://u:secret@db/jobs?pool_max_conns=2.5",
	} {
		_, err := parseDSN(dsn)
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: error %v, want an invalid-input error", dsn, err)
			continue
		}
		if !strings.Contains(err.Error(), "pool_max_conns") || !strings.Contains(err.Error(), "3 to 1000") {
			t.Errorf("%s: error %q does not say what pool_max_conns takes", dsn, err)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error %q shows the password", dsn, err)
		}
	}
}

// TestParseDSNPooler: pooler=transaction marks a PostgreSQL server reached
// through a transaction pooler and never reaches the driver; what cannot
// pass such a pooler is refused, each with a line saying why, without the
// password.
func TestParseDSNPooler(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	for _, tc := range []struct {
		dsn    string
		pooled bool
	}{
		{"postgres://u@db/jobs", false},
		{"postgres://u@db:6432/jobs?pooler=transaction", true},
		{"postgres://u@db:6432/jobs?pooler=transaction&binary_parameters=yes&application_name=x", true},
	} {
		got, err := parseDSN(tc.dsn)
		if err != nil {
			t.Errorf("%s: %v", tc.dsn, err)
			continue
		}
		if got.pooled != tc.pooled {
			t.Errorf("%s: pooled %v, want %v", tc.dsn, got.pooled, tc.pooled)
		}
		if strings.Contains(got.driverDSN, "pooler") {
			t.Errorf("%s: driver DSN %q still has pooler", tc.dsn, got.driverDSN)
		}
		if !strings.Contains(got.driverDSN, "binary_parameters=yes") {
			t.Errorf("%s: driver DSN %q lacks binary_parameters=yes", tc.dsn, got.driverDSN)
		}
	}
	for dsn, want := range map[string]string{
		"postgres://u:secret@db/jobs?pooler=session":                               "pooler=transaction",
		"postgres://u:secret@db/jobs?pooler=":                                      "pooler=transaction",
		"postgres://u:secret@db/jobs?pooler=transaction&pooler=transaction":        "give it once",
		"postgres://u:secret@db/jobs?pooler=transaction&binary_parameters=no":      "binary_parameters=no",
		"postgres://u:secret@db/jobs?pooler=transaction&search_path=jobs":          "database of its own",
		"postgres://u:secret@db/jobs?pooler=transaction&options=-csearch_path%3Dx": "options",
		"mysql://u:secret@db/jobs?pooler=transaction":                              "PostgreSQL only",
	} {
		_, err := parseDSN(dsn)
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: error %v, want an invalid-input error", dsn, err)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error %q, want one that says %q and hides the password", dsn, err, want)
		}
	}
}

// PGPASSWORD, which lib/pq would read on every connection, is taken into an
// address without a password once, so serve may drop it from its
// environment. Not parallel: it sets the process's environment.
func TestPostgresTakesPGPASSWORDIntoTheAddress(t *testing.T) {
	t.Setenv("PGPASSWORD", "s3cr&t")
	for dsn, want := range map[string]string{
		"postgres://jobctl@db/jobctl":                   "s3cr&t",
		"postgres://jobctl:own@db/jobctl":               "own",
		"postgres://jobctl@db/jobctl?password=in-query": "in-query",
	} {
		tgt, err := parseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("PGPASSWORD", "")
		cfg, err := pq.NewConfig(tgt.driverDSN)
		t.Setenv("PGPASSWORD", "s3cr&t")
		if err != nil || cfg.Password != want {
			t.Errorf("%s: the driver's password without PGPASSWORD is %q (%v), want %q", dsn, cfg.Password, err, want)
		}
		if strings.Contains(tgt.display, "s3cr") {
			t.Errorf("%s: its name %q shows the password", dsn, tgt.display)
		}
	}
	for dsn, want := range map[string]bool{"postgres://u:p@h/d": true, "postgres://u@h/d?password=p": true,
		"postgres://u@h/d": false, "mysql://u:p@h/d": true, "sqlite:/x.db": false} {
		if DSNHasPassword(dsn) != want {
			t.Errorf("DSNHasPassword(%q) = %v", dsn, !want)
		}
	}
}

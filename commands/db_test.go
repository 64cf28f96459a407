package commands

import (
	"context"
	"encoding/json"
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

func TestStoreMigratesOnFirstUse(t *testing.T) {
	ios, stdout, _ := TestIO("")
	f := NewFactory(ios)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "jobctl.db")
	f.DSN = func() string { return dsn }
	t.Cleanup(func() { _ = f.Close() })
	root := NewRootCmd(f, "test")
	root.SetArgs([]string{"list", "-o", "json"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("list on a fresh database: %v", err)
	}
	if strings.TrimSpace(stdout.String()) != "[]" {
		t.Errorf("list on a fresh database = %q; want []", stdout.String())
	}
}

func TestDSNPrecedence(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	t.Setenv("JOBCTL_DB", "")
	t.Setenv("XDG_STATE_HOME", "/state")
	if got := f.DSN(); got != "sqlite:/state/jobctl/jobctl.db" {
		t.Errorf("default DSN %q", got)
	}
	t.Setenv("JOBCTL_DB", "sqlite:/env.db")
	if got := f.DSN(); got != "sqlite:/env.db" {
		t.Errorf("DSN with JOBCTL_DB %q", got)
	}
	root := NewRootCmd(f, "test")
	if err := root.ParseFlags([]string{"--db", "sqlite:/flag.db"}); err != nil {
		t.Fatal(err)
	}
	if got := f.DSN(); got != "sqlite:/flag.db" {
		t.Errorf("DSN with --db %q", got)
	}
}

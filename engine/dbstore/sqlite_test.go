package dbstore

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/storetest"
)

// openStore opens a store on dsn and closes it when the test ends, before
// the database or schema the test made is dropped (cleanups run last-in
// first-out).
func openStore(t testing.TB, dsn string) *Store {
	t.Helper()
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openSQLite opens a store on the SQLite file at path.
func openSQLite(t testing.TB, path string) *Store { return openStore(t, "sqlite:"+path) }

// The bytes of an SQLite database migrated once per test binary, which
// migratedSQLite copies: migrating under the race detector costs about a
// second of CPU per test. It is what sqlitetest.DSN does for the other
// packages, which these tests cannot import, as it imports this package.
var (
	sqliteTemplateOnce  sync.Once
	sqliteTemplate      []byte
	sqliteTemplateError error
)

// migratedSQLite opens a store on a new SQLite database of the test's own,
// at the current schema.
func migratedSQLite(t testing.TB) *Store {
	t.Helper()
	sqliteTemplateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "jobctl-dbstore-test")
		if err != nil {
			sqliteTemplateError = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "jobctl.db")
		s, err := Open(context.Background(), "sqlite:"+path)
		if err == nil {
			err = s.Migrate(context.Background())
			// Closing folds the write-ahead log into the file.
			if cerr := s.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			sqliteTemplate, err = os.ReadFile(path)
		}
		sqliteTemplateError = err
	})
	if sqliteTemplateError != nil {
		t.Fatalf("migrating the SQLite database the tests copy: %v", sqliteTemplateError)
	}
	path := filepath.Join(t.TempDir(), "jobctl.db")
	if err := os.WriteFile(path, sqliteTemplate, 0o600); err != nil {
		t.Fatal(err)
	}
	return openSQLite(t, path)
}

func migrated(t testing.TB, s *Store) *Store {
	t.Helper()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestSQLiteConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) engine.Store {
		return migratedSQLite(t)
	})
}

func TestSQLiteOpenPreparesFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state", "jobctl")
	path := filepath.Join(dir, "jobctl.db")
	s := migrated(t, openSQLite(t, path))

	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("directory mode %o, want 700", perm)
	}
	info, err = os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("database file mode %o, want 600: it holds the cluster token", perm)
	}
	if s.Dialect() != "sqlite" || s.Location() != "sqlite:"+path {
		t.Errorf("Dialect, Location = %q, %q", s.Dialect(), s.Location())
	}
	// Every connection of the pool has the settings, not just the first.
	conns := make([]*sqlx.Conn, 0, 3)
	for range 3 {
		c, err := s.db.Connx(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var journal string
		var fk, busy int
		if err := c.GetContext(t.Context(), &journal, "PRAGMA journal_mode"); err != nil {
			t.Fatal(err)
		}
		_ = c.GetContext(t.Context(), &fk, "PRAGMA foreign_keys")
		_ = c.GetContext(t.Context(), &busy, "PRAGMA busy_timeout")
		if journal != "wal" || fk != 1 || busy < 1000 {
			t.Errorf("connection %d: journal_mode %s, foreign_keys %d, busy_timeout %d; want wal, 1, >= 1000", i, journal, fk, busy)
		}
		_ = c.Close()
	}
}

// TestSQLiteConcurrentMigrate has two processes' stores on one new file
// migrate at the same time.
func TestSQLiteConcurrentMigrate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "jobctl.db")
	testConcurrentMigrate(t, func() *Store { return openSQLite(t, path) })
}

func TestSQLiteMigrateDownAndUp(t *testing.T) {
	t.Parallel()
	testMigrateDownAndUp(t, migrated(t, openSQLite(t, filepath.Join(t.TempDir(), "jobctl.db"))))
}

// TestSQLiteWritersAcrossStores has two stores on one file, as two jobctl
// processes would, write at once: the busy timeout and immediate
// transactions make them queue rather than fail.
func TestSQLiteWritersAcrossStores(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "jobctl.db")
	a := migrated(t, openSQLite(t, path))
	b := openSQLite(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			j, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued})
			if err == nil {
				_, err = s.JobUpdate(context.Background(), engine.QueuedStartUpdate(j, "n1"))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	jobs, err := b.JobList(t.Context(), engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}})
	if err != nil || len(jobs) != 40 {
		t.Errorf("JobList = %d jobs, %v; want 40", len(jobs), err)
	}
}

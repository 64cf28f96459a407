// Package sqlitetest gives a test a fresh SQLite database at the current
// schema for the cost of writing a file. Migrating one under the race
// detector takes about a second of CPU, as long as many a test itself; so
// the first call in a test binary migrates one database and keeps its
// bytes, and every call writes a copy of them to the test's own
// directory.
package sqlitetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine/dbstore"
)

var (
	migratedOnce sync.Once
	migrated     []byte
	migratedErr  error
)

// DSN is the "sqlite:PATH" of a new database, migrated to the current
// schema, in a directory the test removes when it ends; each call makes
// another.
func DSN(t testing.TB) string {
	t.Helper()
	migratedOnce.Do(func() { migrated, migratedErr = migrate() })
	if migratedErr != nil {
		t.Fatalf("migrating the SQLite database the tests copy: %v", migratedErr)
	}
	path := filepath.Join(t.TempDir(), "jobctl.db")
	if err := os.WriteFile(path, migrated, 0o600); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}

// migrate migrates a database in a directory of its own and returns the
// file's bytes. Closing the store first folds the write-ahead log into the
// file, so the file alone is the whole database.
func migrate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "jobctl-sqlitetest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobctl.db")
	ctx := context.Background()
	s, err := dbstore.Open(ctx, "sqlite:"+path)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

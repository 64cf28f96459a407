package dbstore

import (
	"errors"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine"
	jobsql "github.com/jobctl/jobctl/sql"
)

// testConcurrentMigrate migrates one empty database from two stores (two
// processes starting together), twice each, all at once.
func testConcurrentMigrate(t *testing.T, open func() *Store) {
	stores := []*Store{open(), open()}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = stores[i%2].Migrate(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	want, err := jobsql.Migrations(stores[0].Dialect())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stores {
		st, err := s.MigrationStatus(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != len(want) {
			t.Errorf("MigrationStatus lists %d migrations, want %d", len(st), len(want))
		}
		for _, m := range st {
			if m.AppliedAt == nil {
				t.Errorf("migration %d not applied", m.Version)
			}
		}
	}
	// Both stores work on the one schema.
	j, err := stores[0].JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores[1].JobGet(t.Context(), j.ID); err != nil {
		t.Errorf("the other store cannot read the job: %v", err)
	}
}

// testMigrateDownAndUp reverts every migration and applies them again: the
// .down.sql files work and leave nothing behind that the .up.sql trips on.
func testMigrateDownAndUp(t *testing.T, s *Store) {
	ctx := t.Context()
	j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClusterToken(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, 0); err != nil {
		t.Fatalf("MigrateDown(0): %v", err)
	}
	st, err := s.MigrationStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st {
		if m.AppliedAt != nil {
			t.Errorf("migration %d still applied after MigrateDown(0)", m.Version)
		}
	}
	if _, err := s.JobGet(ctx, j.ID); err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("JobGet after reverting the schema = %v, want a missing-table error", err)
	}
	if err := s.MigrateDown(ctx, 0); err != nil {
		t.Errorf("MigrateDown(0) again: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate after MigrateDown: %v", err)
	}
	if jobs, err := s.JobList(ctx, engine.JobListParams{}); err != nil || len(jobs) != 0 {
		t.Errorf("after down and up: %d jobs, %v; want an empty store", len(jobs), err)
	}
	if _, err := s.LeaseGet(ctx); err != nil {
		t.Errorf("LeaseGet after down and up: %v", err)
	}
	if err := s.MigrateDown(ctx, -1); err == nil {
		t.Error("MigrateDown(-1) succeeded")
	}
}

func TestMigrationStatusOfEmptyDatabase(t *testing.T) {
	t.Parallel()
	s := openSQLite(t, t.TempDir()+"/empty.db")
	st, err := s.MigrationStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) == 0 {
		t.Fatal("no migrations listed")
	}
	for _, m := range st {
		if m.AppliedAt != nil {
			t.Errorf("migration %d applied on an empty database", m.Version)
		}
	}
	// Reading the status created nothing.
	var n int
	if err := s.db.GetContext(t.Context(), &n, "SELECT COUNT(*) FROM sqlite_master"); err != nil || n != 0 {
		t.Errorf("MigrationStatus left %d schema objects, %v", n, err)
	}
}

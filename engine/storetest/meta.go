package storetest

import (
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var metaTests = []subtest{
	{"DialectAndClock", testDialectAndClock},
	{"MigrateIdempotent", testMigrateIdempotent},
	{"MigrateConcurrent", testMigrateConcurrent},
}

func testDialectAndClock(t *testing.T, s engine.Store) {
	if d := s.Dialect(); !slices.Contains([]string{"sqlite", "postgres", "mysql", "memory"}, d) {
		t.Errorf("Dialect() = %q", d)
	}
	t1 := dbNow(t, s)
	t2 := dbNow(t, s)
	wantUTC(t, "Now", t1)
	if t2.Before(t1) {
		t.Errorf("database clock went back: %s then %s", t1, t2)
	}
	// The database runs beside the tests; a large gap means a unit mix-up.
	if d := time.Since(t1); d > time.Minute || d < -time.Minute {
		t.Errorf("database clock %s is %s off the local clock", t1, d)
	}
}

func migrationStatus(t *testing.T, s engine.Store) []engine.Migration {
	t.Helper()
	st, err := s.MigrationStatus(t.Context())
	if err != nil {
		t.Fatalf("MigrationStatus: %v", err)
	}
	return st
}

func testMigrateIdempotent(t *testing.T, s engine.Store) {
	st := migrationStatus(t, s)
	// Only a store without a schema (in memory) has no migrations.
	if len(st) == 0 && s.Dialect() != "memory" {
		t.Fatal("MigrationStatus lists no migrations")
	}
	for i, m := range st {
		if m.Version != i+1 || m.Name == "" || m.AppliedAt == nil {
			t.Errorf("migration %d: %+v, want version %d, named, applied", i, m, i+1)
		}
	}
	j := queued(t, s, 1)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if again := migrationStatus(t, s); !reflect.DeepEqual(again, st) {
		t.Errorf("a second Migrate changed the status:\n before %+v\n after  %+v", st, again)
	}
	get(t, s, j.ID) // the data survived
}

// testMigrateConcurrent has several processes' worth of Migrate calls run at
// once on an already migrated store; none may fail.
func testMigrateConcurrent(t *testing.T, s engine.Store) {
	const migrators = 4
	var (
		wg   sync.WaitGroup
		errs = make([]error, migrators)
	)
	for i := range migrators {
		wg.Go(func() { errs[i] = s.Migrate(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
}

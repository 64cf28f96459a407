package sqlitetest

import (
	"context"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
)

// Each database is current, empty and the test's own: a job one test
// inserts is not in the next one's.
func TestDSNGivesEachTestAFreshCurrentDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for i := range 2 {
		s, err := dbstore.Open(ctx, DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		if current, err := s.SchemaCurrent(ctx); err != nil || !current {
			t.Fatalf("database %d: schema current %v, %v; want a migrated one", i, current, err)
		}
		jobs, err := s.JobList(ctx, engine.JobListParams{})
		if err != nil || len(jobs) != 0 {
			t.Fatalf("database %d holds %d jobs (%v); want none", i, len(jobs), err)
		}
		if _, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

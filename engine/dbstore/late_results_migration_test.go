package dbstore

import (
	"reflect"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// lateResultsVersion is migration 017_late_results, which puts the jobs
// left DISPATCHING by an older release back in the queue.
const lateResultsVersion = 17

func TestSQLiteLateResultsMigration(t *testing.T) {
	t.Parallel()
	testLateResultsMigration(t, migrated(t, openSQLite(t, t.TempDir()+"/late.db")))
}

func TestPostgresLateResultsMigration(t *testing.T) {
	t.Parallel()
	testLateResultsMigration(t, migrated(t, openStore(t, postgresSchemaDSN(t))))
}

func TestMySQLLateResultsMigration(t *testing.T) {
	t.Parallel()
	testLateResultsMigration(t, migrated(t, openStore(t, mysqlDatabaseDSN(t))))
}

// markDispatching writes what a dispatcher of an older release left when
// it died mid-offer: the job DISPATCHING to node, its version moved on.
// This release writes no such row, so the test writes it by hand.
func markDispatching(t *testing.T, s *Store, j *engine.Job, node string) {
	t.Helper()
	q := s.db.Rebind(`UPDATE jobs SET status = 'DISPATCHING', node = ?, version = version + 1 WHERE id = ?`)
	if _, err := s.db.ExecContext(t.Context(), q, node, j.ID); err != nil {
		t.Fatalf("mark job %d DISPATCHING: %v", j.ID, err)
	}
}

// testLateResultsMigration: on a database at migration 016, jobs left
// DISPATCHING (one never run, one that ran and failed before) go back to
// their queue with migration 017, as the housekeeping of the release
// before put them back: RESTART, no node, the attempt number they had, a
// message naming the node, and a new version. Then a round of this
// release finds them, and the state machine has no way into DISPATCHING.
func testLateResultsMigration(t *testing.T, s *Store) {
	h := finalAttemptHarness{t: t, s: s}
	if err := s.MigrateDown(t.Context(), lateResultsVersion-1); err != nil {
		t.Fatalf("migrate down to %d: %v", lateResultsVersion-1, err)
	}
	fresh := h.submit("build")
	ranBefore := h.end(h.start(h.submit("build"), "n1"), engine.RunFailed, 3, 1)
	if ranBefore.Status != engine.StatusRestart || ranBefore.Attempt != 1 {
		t.Fatalf("setup: the job that ran is %s at attempt %d, want RESTART at 1", ranBefore.Status, ranBefore.Attempt)
	}
	untouched := h.submit("build")
	markDispatching(t, s, fresh, "n2")
	markDispatching(t, s, ranBefore, "n3")
	before := map[int64]*engine.Job{}
	for _, j := range []*engine.Job{fresh, ranBefore, untouched} {
		got, err := s.JobGet(t.Context(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		before[j.ID] = got
	}
	if before[fresh.ID].Status != "DISPATCHING" || before[ranBefore.ID].Node != "n3" {
		t.Fatalf("setup: %+v %+v", before[fresh.ID], before[ranBefore.ID])
	}

	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate to %d: %v", lateResultsVersion, err)
	}
	for _, c := range []struct {
		job  *engine.Job
		node string
	}{{fresh, "n2"}, {ranBefore, "n3"}} {
		was := before[c.job.ID]
		got, err := s.JobGet(t.Context(), c.job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != engine.StatusRestart || got.Node != "" || got.Attempt != was.Attempt || got.Version != was.Version+1 ||
			got.Message != "dispatch to "+c.node+" was interrupted" {
			t.Errorf("job %d after migration %d: %s on %q attempt %d version %d %q; want RESTART, no node, attempt %d, version %d, %q",
				c.job.ID, lateResultsVersion, got.Status, got.Node, got.Attempt, got.Version, got.Message,
				was.Attempt, was.Version+1, "dispatch to "+c.node+" was interrupted")
		}
	}
	if got, err := s.JobGet(t.Context(), untouched.ID); err != nil || !reflect.DeepEqual(got, before[untouched.ID]) {
		t.Errorf("a queued job changed with the migration: %+v, %v", got, err)
	}
	// The attempt the job that ran made is recorded once, as it ended.
	if list := h.attempts(ranBefore.ID); len(list) != 1 || list[0].Ending != engine.StatusRestart || list[0].Node != "n1" {
		t.Errorf("attempts of the job that ran before: %+v; want its one run on n1", list)
	}
	restart, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: engine.StatusRestart, Type: "build"})
	if err != nil || len(restart) != 2 {
		t.Fatalf("RESTART queue after the migration: %d jobs, %v; want both put back", len(restart), err)
	}
	// They run as any job in the queue does.
	h.end(h.start(restart[0], "n1"), engine.RunSucceeded, 0, 1)
	// PostgreSQL's CHECK no longer lets the name in; SQLite and MySQL
	// would copy the whole table to change theirs, and keep it.
	if s.dialect == postgresDialect {
		q := s.db.Rebind(`UPDATE jobs SET status = 'DISPATCHING' WHERE id = ?`)
		if _, err := s.db.ExecContext(t.Context(), q, untouched.ID); err == nil {
			t.Errorf("PostgreSQL took a DISPATCHING row after migration %d", lateResultsVersion)
		}
	}
}

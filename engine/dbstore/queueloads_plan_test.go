package dbstore

import (
	"regexp"
	"strings"
	"testing"
)

// The queues' loads are index steps however long the queue is: no step
// scans the table or a whole index, and on PostgreSQL the types and the
// heaviest load are read from the end of the index where the newest jobs
// are, past none of the entries that jobs which left the queue leave
// behind until a vacuum.
func TestQueueLoadsAreIndexStepsFromTheNewestEnd(t *testing.T) {
	for _, b := range []struct {
		name  string
		open  func(t *testing.T) *Store
		fill  string
		whole *regexp.Regexp // a step that reads every row or entry
		// backward is how many index steps must read from the newest end:
		// SQLite's plan does not say which way it reads.
		backward int
	}{
		{"postgres", func(t *testing.T) *Store { return migrated(t, openStore(t, postgresSchemaDSN(t))) },
			`INSERT INTO jobs (type, status, created_at, timeout_seconds, job_load)
			 SELECT 'noop', 'QUEUED', now(), 0, 1 + i % 2 FROM generate_series(1, 20000) AS i`,
			regexp.MustCompile(`Seq Scan`), 2},
		{"sqlite", func(t *testing.T) *Store { return migratedSQLite(t) },
			`WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 20000)
			 INSERT INTO jobs (type, status, created_at, timeout_seconds, job_load)
			 SELECT 'noop', 'QUEUED', '2026-01-01 00:00:00', 0, 1 + n % 2 FROM i`,
			regexp.MustCompile(`SCAN jobs`), 0},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			for _, q := range []string{b.fill, "ANALYZE jobs"} {
				if _, err := s.db.ExecContext(t.Context(), q); err != nil {
					t.Fatal(err)
				}
			}
			plan := planOf(t, s, qJobQueueLoads, args{})
			if b.whole.MatchString(plan) {
				t.Errorf("the queues' loads read a whole table or index:\n%s", plan)
			}
			if strings.Count(plan, "Index Only Scan Backward") < b.backward {
				t.Errorf("the queues' types and heaviest loads are not read from the newest end:\n%s", plan)
			}
		})
	}
}

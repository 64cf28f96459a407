package dbstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// BenchmarkJobUpdateManyTableSize measures a node's two batched steps, the
// start (RESTART → RUNNING) and the finish (RUNNING → FINISHED, FAILED
// or RESTART, which also writes the attempts a retry ends), with 20,000
// and with 1,000,000 ended jobs in the table beside the batch, each with
// its attempt on its row. Their cost should not depend on the table's size: each reads
// its jobs through the primary key and writes only the indexes their
// statuses belong to. On PostgreSQL the benchmark also reports the shared
// buffers one statement of each step touches (EXPLAIN ANALYZE of the same
// statement, rolled back), which does not depend on the machine's load.
//
//	go test -run X -bench JobUpdateManyTableSize -benchtime 20x ./engine/dbstore/
func BenchmarkJobUpdateManyTableSize(b *testing.B) {
	if testing.Short() {
		b.Skip("needs the test databases; runs without -short")
	}
	backends := []struct {
		name string
		open func(b *testing.B) *Store
	}{
		{"sqlite", func(b *testing.B) *Store {
			return migrated(b, openSQLite(b, filepath.Join(b.TempDir(), "jobctl.db")))
		}},
		{"postgres", func(b *testing.B) *Store { return migrated(b, openStore(b, postgresSchemaDSN(b))) }},
		{"mysql", func(b *testing.B) *Store { return migrated(b, openStore(b, mysqlDatabaseDSN(b))) }},
	}
	for _, backend := range backends {
		b.Run(backend.name, func(b *testing.B) {
			for _, ended := range []int{20_000, 1_000_000} {
				b.Run(fmt.Sprintf("ended-%d", ended), func(b *testing.B) {
					s := backend.open(b)
					fillEnded(b, s, ended)
					c := newBatchCycle(b, s)
					b.Run("start", func(b *testing.B) {
						for b.Loop() {
							c.step(startUpdate)
							b.StopTimer()
							c.step(stopUpdate)
							b.StartTimer()
						}
						reportJobsPerSecond(b)
						c.reportBuffers(b, startUpdate)
					})
					b.Run("finish", func(b *testing.B) {
						for b.Loop() {
							b.StopTimer()
							c.step(startUpdate)
							b.StartTimer()
							c.step(finishUpdate)
							b.StopTimer()
							c.step(requeueUpdate)
							b.StartTimer()
						}
						reportJobsPerSecond(b)
						c.step(startUpdate)
						c.reportBuffers(b, finishUpdate)
					})
				})
			}
		})
	}
}

// fillEnded adds n FINISHED jobs, each holding its one attempt on its row
// as migration 016 keeps it, in a few statements of the backend's own, and
// refreshes the statistics where the backend keeps them, as a table that
// has lived would have them.
func fillEnded(b *testing.B, s *Store, n int) {
	b.Helper()
	ctx := context.Background()
	var stmts []string
	switch s.dialect {
	case postgresDialect:
		stmts = []string{
			`INSERT INTO jobs (type, status, node, creator, timeout_seconds, created_at, queued_at, started_at,
			                   finished_at, attempt, exit_code, version)
			 SELECT 'noop', 'FINISHED', 'n1', 'filler', 28800, t, t, t, t + interval '5 milliseconds', 1, 0, 4
			 FROM generate_series(1, $1) AS g, LATERAL (SELECT now() - interval '1 day' + g * interval '1 millisecond') AS x(t)`,
			`ANALYZE jobs`, `ANALYZE job_attempts`,
		}
	case sqliteDialect:
		stmts = []string{
			`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
			 INSERT INTO jobs (type, status, node, creator, timeout_seconds, created_at, queued_at, started_at,
			                   finished_at, attempt, exit_code, version)
			 SELECT 'noop', 'FINISHED', 'n1', 'filler', 28800, t, t, t, t, 1, 0, 4
			 FROM (SELECT strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 day', printf('+%d.%03d seconds', n / 1000, n % 1000)) AS t
			       FROM g)`,
			`ANALYZE`,
		}
	case mysqlDialect:
		digits := `(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
		            UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)`
		stmts = []string{
			`INSERT INTO jobs (type, args, payload, rollback, status, node, creator, timeout_seconds, created_at,
			                   queued_at, started_at, finished_at, attempt, exit_code, version)
			 SELECT 'noop', '[]', '{}', '', 'FINISHED', 'n1', 'filler', 28800, t, t, t, t, 1, 0, 4
			 FROM (SELECT TIMESTAMPADD(MICROSECOND, 1000 * (a.d + 10 * b.d + 100 * c.d + 1000 * d.d + 10000 * e.d
			                                               + 100000 * f.d), UTC_TIMESTAMP(6) - INTERVAL 1 DAY) AS t,
			              a.d + 10 * b.d + 100 * c.d + 1000 * d.d + 10000 * e.d + 100000 * f.d AS n
			       FROM ` + digits + ` a, ` + digits + ` b, ` + digits + ` c, ` + digits + ` d, ` + digits + ` e, ` +
				digits + ` f) AS g
			 WHERE g.n < ?`,
			`ANALYZE TABLE jobs, job_attempts`,
		}
	}
	for i, stmt := range stmts {
		var err error
		if i == 0 {
			_, err = s.db.ExecContext(ctx, stmt, n)
		} else {
			_, err = s.db.ExecContext(ctx, stmt)
		}
		if err != nil {
			b.Fatalf("fill %d ended jobs: %v", n, err)
		}
	}
}

// reportBuffers reports, on PostgreSQL, the shared buffers the statement
// of one step touches, from EXPLAIN (ANALYZE, BUFFERS) of it in a
// transaction that is rolled back; the jobs stay where they were.
func (c *batchCycle) reportBuffers(b *testing.B, next func(i int, j *engine.Job) engine.JobUpdate) {
	if c.s.dialect != postgresDialect {
		return
	}
	us := make([]engine.JobUpdate, len(c.jobs))
	for i, j := range c.jobs {
		us[i] = next(i, j)
	}
	query, params, err := c.s.bind(c.s.q, qJobUpdateMany, jobUpdateArrays(us), false)
	if err != nil {
		c.b.Fatal(err)
	}
	var buffers int
	err = runTx(context.Background(), c.s.db, func(tx *sqlx.Tx) error {
		if buffers, _, err = explainBuffers(context.Background(), tx, query, params); err != nil {
			return err
		}
		return errRollback
	})
	if err != errRollback {
		c.b.Fatal(err)
	}
	b.ReportMetric(float64(buffers), "buffers/batch")
}

// errRollback ends a transaction whose changes are not wanted.
var errRollback = fmt.Errorf("rolled back on purpose")

package dbstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/storetest"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// postgresBaseDSN is the test server; each test works in its own schema.
func postgresBaseDSN() string {
	if dsn := os.Getenv("JOBCTL_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// postgresSchemaDSN creates a fresh schema, dropped when the test ends, and
// returns a DSN whose connections work in it. An unreachable server fails
// the test: these tests are never skipped.
func postgresSchemaDSN(t testing.TB) string {
	t.Helper()
	base := postgresBaseDSN()
	admin, err := sqlx.Open("postgres", base)
	if err != nil {
		t.Fatalf("PostgreSQL test DSN (JOBCTL_TEST_POSTGRES): %v", err)
	}
	if err := admin.PingContext(t.Context()); err != nil {
		_ = admin.Close()
		t.Fatalf("PostgreSQL at %s is unreachable (set JOBCTL_TEST_POSTGRES): %v", redact(base), err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "jobctl_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+pq.QuoteIdentifier(schema)); err != nil {
		_ = admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP SCHEMA " + pq.QuoteIdentifier(schema) + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// postgresDatabaseDSN creates a fresh database, dropped when the test
// ends, and returns a DSN for it: for what a schema cannot do, such as
// work behind a transaction pooler.
func postgresDatabaseDSN(t testing.TB) string {
	t.Helper()
	base := postgresBaseDSN()
	admin, err := sqlx.Open("postgres", base)
	if err != nil {
		t.Fatalf("PostgreSQL test DSN (JOBCTL_TEST_POSTGRES): %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "jobctl_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		_ = admin.Close()
		t.Fatalf("PostgreSQL at %s: create database: %v (set JOBCTL_TEST_POSTGRES)", redact(base), err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE " + pq.QuoteIdentifier(name) + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	if u.RawQuery == "" {
		u.RawQuery = "sslmode=prefer"
	}
	return u.String()
}

func TestPostgresConformance(t *testing.T) {
	t.Parallel()
	storetest.RunWith(t, func(t *testing.T) engine.Store {
		return migrated(t, openStore(t, postgresSchemaDSN(t)))
	}, storetest.Options{Peer: func(t *testing.T, s engine.Store) engine.Store {
		// Its own pools and listener on the same schema: another process.
		return openStore(t, s.(*Store).driverDSN)
	}})
}

func TestPostgresConcurrentMigrate(t *testing.T) {
	t.Parallel()
	dsn := postgresSchemaDSN(t)
	testConcurrentMigrate(t, func() *Store { return openStore(t, dsn) })
}

func TestPostgresMigrateDownAndUp(t *testing.T) {
	t.Parallel()
	testMigrateDownAndUp(t, migrated(t, openStore(t, postgresSchemaDSN(t))))
}

func TestPostgresLocationHidesSecrets(t *testing.T) {
	t.Parallel()
	dsn := postgresSchemaDSN(t)
	s := openStore(t, dsn)
	if s.Dialect() != "postgres" {
		t.Errorf("Dialect = %q", s.Dialect())
	}
	if loc := s.Location(); strings.Contains(loc, "?") || !strings.HasPrefix(loc, "postgres") {
		t.Errorf("Location = %q, want the URL without parameters", loc)
	}
}

// A node whose main pool is exhausted by job work still renews its lease:
// the lease has a connection of its own, so a busy pool cannot make the
// holder miss its renewal and lose the lease.
func TestPostgresLeaseRenewsWithTheMainPoolExhausted(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	s.db.SetMaxOpenConns(2)
	for range 2 {
		conn, err := s.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	ok, err := s.LeaseAcquire(ctx, "busy-node", 10*time.Second)
	if err != nil || !ok.Held() {
		t.Fatalf("LeaseAcquire with the main pool exhausted: %v, %v; want the lease", ok, err)
	}
	if ok, err := s.LeaseRelease(ctx, "busy-node"); err != nil || !ok {
		t.Fatalf("LeaseRelease with the main pool exhausted: %v, %v", ok, err)
	}
}

// TestPostgresPoolMaxConns: pool_max_conns is the store's connection
// budget, of which the main pool has what the control connection and the
// listener leave, and the server never sees the parameter.
func TestPostgresPoolMaxConns(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)+"&pool_max_conns=3"))
	if got := s.MaxConns(); got != 3 {
		t.Errorf("budget of %d, want 3", got)
	}
	if got := s.db.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("main pool of %d, want 1", got)
	}
	if _, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued}); err != nil {
		t.Fatalf("a store opened with pool_max_conns does not work: %v", err)
	}
}

// TestPostgresPagesAndPurgesCompileNothing: the dispatch page and the purge
// run with JIT compilation off, whatever the planner thinks they cost. A
// queue's cost estimate grows with the table, and past jit_above_cost each
// page took tens of milliseconds to compile before it read a row. The test
// lowers the threshold to nothing, so any plan would be compiled, and sees
// that the plan of each still is not, and that it is without the settings.
func TestPostgresPagesAndPurgesCompileNothing(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	ctx := t.Context()
	var available bool
	if err := s.db.GetContext(ctx, &available, "SELECT pg_jit_available()"); err != nil {
		t.Fatal(err)
	}
	if !available {
		t.Skip("this PostgreSQL server cannot compile plans (pg_jit_available() is false)")
	}
	at := s.dialect.timeArg(time.Now())
	for _, tt := range []struct {
		name     string
		a        args
		settings string
	}{
		{qJobListDispatchable, args{"status": "QUEUED", "type": engine.TypeNoop, "limit": int64(1000),
			"max_load": 2 * engine.MaxJobLoad, "load_above": -1.0}, s.dialect.pageInIndexOrder},
		{qJobListDispatchableAfter, args{"status": "QUEUED", "type": engine.TypeNoop, "limit": int64(1000),
			"after_priority": 50, "after_id": int64(1), "max_load": 2 * engine.MaxJobLoad, "load_above": -1.0},
			s.dialect.pageInIndexOrder},
		{purgeCandidatesQuery(engine.JobPurgeParams{FinishedBefore: &time.Time{}}), args{
			"statuses": []string{"FINISHED", "FAILED"}, "creator": "", "finished_before": at, "limit": int64(100)},
			s.dialect.purgeByIndex},
	} {
		query, params, err := s.bind(s.q, tt.name, tt.a, true)
		if err != nil {
			t.Fatal(err)
		}
		planWith := func(settings string) string {
			var plan string
			err := s.inTx(ctx, func(tx *sqlx.Tx) error {
				if _, err := tx.ExecContext(ctx, "SET LOCAL jit_above_cost = 0"); err != nil {
					return err
				}
				if settings != "" {
					if _, err := tx.ExecContext(ctx, settings); err != nil {
						return err
					}
				}
				plan, err = explain(ctx, tx, s.dialect.name, query, params)
				return err
			})
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			return plan
		}
		if plan := planWith(""); !strings.Contains(plan, "JIT") {
			t.Fatalf("%s is not compiled even at jit_above_cost 0, so this test proves nothing:\n%s", tt.name, plan)
		}
		if plan := planWith(tt.settings); strings.Contains(plan, "JIT") {
			t.Errorf("%s is compiled:\n%s", tt.name, plan)
		}
	}
}

// waitRunningTransactionsEnd waits until every transaction of the server
// that holds a transaction id and runs now has ended, in any database. Only
// then may a connection prune, or mark dead in an index, the row versions
// that the transactions committed so far left behind: while the oldest
// running transaction id stays the same, a connection does not work out
// afresh what it may remove, so a transaction of another test package in
// another database holds the removal back too.
func waitRunningTransactionsEnd(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	var next string
	if err := s.db.GetContext(ctx, &next, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text"); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 2*time.Minute, "the transactions running now to end", func() bool {
		var ended bool
		if err := s.db.GetContext(ctx, &ended, "SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8", next); err != nil {
			t.Fatal(err)
		}
		return ended
	})
}

// TestPostgresRunsRewriteJobsOnTheirOwnPages holds migration 026: the new
// version of a job that a start or an end of a run writes lands on the page
// of the old one. With full pages nearly every version would move to
// another page. The end finds room only once the versions the start left
// behind are pruned, which an open transaction of another test in the same
// database would forbid, so the test has a database of its own. The 400
// inserts would also start an automatic ANALYZE of the table, whose
// snapshot forbids the same pruning while it lasts: the table has none.
// So does a transaction in another database that ran at the start's
// commit: the end waits for them to end (waitRunningTransactionsEnd).
func TestPostgresRunsRewriteJobsOnTheirOwnPages(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresDatabaseDSN(t)))
	ctx := t.Context()
	if _, err := s.db.ExecContext(ctx, "ALTER TABLE jobs SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	const n = 400
	jobs := make([]*engine.Job, n)
	for i := range jobs {
		j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: 1})
		if err != nil {
			t.Fatal(err)
		}
		jobs[i] = j
	}
	pages := func() map[int64]int64 {
		var rows []struct {
			ID   int64 `db:"id"`
			Page int64 `db:"page"`
		}
		if err := s.db.SelectContext(ctx, &rows, "SELECT id, (ctid::text::point)[0]::bigint AS page FROM jobs"); err != nil {
			t.Fatal(err)
		}
		out := make(map[int64]int64, len(rows))
		for _, r := range rows {
			out[r.ID] = r.Page
		}
		return out
	}
	step := func(name string, next func(*engine.Job) engine.JobUpdate) {
		t.Helper()
		before := pages()
		us := make([]engine.JobUpdate, len(jobs))
		for i, j := range jobs {
			us[i] = next(j)
		}
		res, err := s.JobUpdateMany(ctx, us)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("%s of job %d: %v", name, jobs[i].ID, r.Err)
			}
			jobs[i] = r.Job
		}
		after, moved := pages(), 0
		for id, page := range before {
			if after[id] != page {
				moved++
			}
		}
		if moved > n/20 {
			t.Errorf("the %s moved %d of %d jobs to another page; want at most %d", name, moved, n, n/20)
		}
	}
	if lastPage := slices.Max(slices.Collect(maps.Values(pages()))); lastPage < 4 {
		t.Fatalf("the jobs fill %d pages; the test needs several full ones", lastPage+1)
	}
	step("start", func(j *engine.Job) engine.JobUpdate { return engine.QueuedStartUpdate(j, "n1") })
	waitRunningTransactionsEnd(t, s)
	step("end", func(j *engine.Job) engine.JobUpdate {
		return engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit status 0"}, false, nil)
	})
}

// unvacuumedPostgresStore is a migrated store of a PostgreSQL database of
// its own, whose jobs table no automatic vacuum or analyze touches, for the
// tests of what reads of the table pass over; exec runs a statement in it.
func unvacuumedPostgresStore(t *testing.T) (s *Store, exec func(string)) {
	t.Helper()
	s = migrated(t, openStore(t, postgresDatabaseDSN(t)))
	exec = func(q string) {
		t.Helper()
		if _, err := s.db.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER TABLE jobs SET (autovacuum_enabled = false)`)
	return s, exec
}

// holdWrite opens a transaction in other's database that holds a
// transaction id, as one that wrote does, until the test rolls it back or
// ends.
func holdWrite(t *testing.T, other *Store) *sqlx.Tx {
	t.Helper()
	held, err := other.db.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Rollback() })
	if _, err := held.ExecContext(t.Context(), "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	return held
}

// TestPostgresNodeLoadsPassFewEntriesOfEndedJobs holds migration 027: a job
// that has run leaves its entry in the index of live jobs past the queue
// until the table is vacuumed, and the loads of the nodes, read every
// round, pass over all of them. The entries of the jobs that ran on one
// node share a key, so they are a few bytes each: after 20,000 runs the
// read passes over about 20 pages, where an entry of its own for each job
// (the id in the key) made it over 100. The read before the measured
// one marks the entries dead, as the rounds of a dispatcher do, once no
// transaction that could still see the runs is left
// (waitRunningTransactionsEnd); the table's own database keeps other
// tests' transactions out, and automatic vacuum is off so it cannot
// remove the entries first.
//
// It also holds what README says of a transaction left open: one that
// wrote in another database before the runs ended keeps every read
// following the entries to the table, however often it is repeated.
func TestPostgresNodeLoadsPassFewEntriesOfEndedJobs(t *testing.T) {
	t.Parallel()
	s, exec := unvacuumedPostgresStore(t)
	ctx := t.Context()
	exec(`INSERT INTO jobs (type, status, node, created_at, started_at, timeout_seconds)
	      SELECT 'noop', 'RUNNING', 'n1', now(), now(), 0 FROM generate_series(1, 20000)`)
	other := openStore(t, postgresDatabaseDSN(t))
	held := holdWrite(t, other)
	exec(`UPDATE jobs SET status = 'FINISHED', finished_at = now()`)
	exec(`ANALYZE jobs`)
	query, params, err := s.bind(s.q, qJobLoadsByNode, args{}, true)
	if err != nil {
		t.Fatal(err)
	}
	// readTwice reads the loads as two rounds in a row do, and gives the
	// pages the second read touched.
	readTwice := func() (int, []byte) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, query, params...); err != nil {
			t.Fatal(err)
		}
		pages, plan, err := explainBuffers(ctx, s.db, query, params)
		if err != nil {
			t.Fatal(err)
		}
		return pages, plan
	}
	if pages, plan := readTwice(); pages <= 200 {
		t.Errorf("with a write held open in another database, the loads of the nodes read only %d pages past "+
			"20,000 ended jobs; want over 200, as each entry leads to the table:\n%s", pages, plan)
	}
	if err := held.Rollback(); err != nil {
		t.Fatal(err)
	}
	waitRunningTransactionsEnd(t, s)
	if pages, plan := readTwice(); pages > 50 {
		t.Errorf("the loads of the nodes read %d pages past 20,000 ended jobs; want at most 50:\n%s", pages, plan)
	}
}

// TestPostgresQueueReadPassesStartedJobsWhileAWriteIsHeld holds the rest of
// what README says of a transaction left open. A job that started leaves
// its entry in the queue's index until the table is vacuumed. Once no
// transaction can still see the job queued, the first read that passes the
// entry marks it dead, and later reads step over it on the index page. A
// transaction that wrote in another database and is still open keeps every
// read of the queue following each such entry to the table; a read-only
// one there holds nothing back.
func TestPostgresQueueReadPassesStartedJobsWhileAWriteIsHeld(t *testing.T) {
	t.Parallel()
	s, exec := unvacuumedPostgresStore(t)
	ctx := t.Context()
	exec(`INSERT INTO jobs (type, status, created_at, queued_at, timeout_seconds)
	      SELECT 'noop', 'QUEUED', now(), now(), 0 FROM generate_series(1, 20010)`)
	exec(`ANALYZE jobs`)
	var first int64
	if err := s.db.GetContext(ctx, &first, "SELECT min(id) FROM jobs"); err != nil {
		t.Fatal(err)
	}
	// start moves the jobs of ids first+from to first+to-1 to RUNNING.
	start := func(from, to int) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = 'RUNNING', node = 'n1', started_at = now()
		                                    WHERE id >= $1 AND id < $2`, first+int64(from), first+int64(to)); err != nil {
			t.Fatal(err)
		}
	}
	query, params, err := s.bind(s.q, qJobListDispatchable, args{"status": "QUEUED", "type": engine.TypeNoop,
		"limit": int64(1000), "after_priority": engine.MaxPriority + 1, "after_id": int64(0),
		"max_load": 2 * engine.MaxJobLoad, "load_above": -1.0}, true)
	if err != nil {
		t.Fatal(err)
	}
	// readTwice reads the first page of the queue as two rounds in a row
	// do: once as the dispatcher does (JobListDispatchable, in index order
	// as a long queue is read), checking that it begins at the job of id
	// first+queued, then once more through EXPLAIN, in the same order, to
	// give the pages that second read touched.
	readTwice := func(queued int) (pages int, plan []byte) {
		t.Helper()
		page, err := s.JobListDispatchable(ctx, engine.JobDispatchableParams{Status: engine.StatusQueued,
			Type: engine.TypeNoop, Limit: 1000, Long: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 || page[0].ID != first+int64(queued) {
			t.Fatalf("the first page holds %d jobs and does not begin with job %d", len(page), first+int64(queued))
		}
		err = s.inTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, s.dialect.pageInIndexOrder); err != nil {
				return err
			}
			pages, plan, err = explainBuffers(ctx, tx, query, params)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return pages, plan
	}
	other := openStore(t, postgresDatabaseDSN(t))

	readOnly, err := other.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = readOnly.Rollback() }()
	if _, err := readOnly.ExecContext(ctx, "SELECT 1"); err != nil { // takes its snapshot
		t.Fatal(err)
	}
	start(0, 10000)
	waitRunningTransactionsEnd(t, s)
	if pages, plan := readTwice(10000); pages > 250 {
		t.Errorf("with a read-only transaction held open in another database, the first page of the queue read "+
			"%d pages past 10,000 started jobs; want at most 250:\n%s", pages, plan)
	}
	if err := readOnly.Rollback(); err != nil {
		t.Fatal(err)
	}

	held := holdWrite(t, other)
	start(10000, 20000)
	if pages, plan := readTwice(20000); pages <= 400 {
		t.Errorf("with a write held open in another database, the first page of the queue read only %d pages "+
			"past 10,000 jobs started since; want over 400, as each entry leads to the table:\n%s", pages, plan)
	}
	if err := held.Rollback(); err != nil {
		t.Fatal(err)
	}
	waitRunningTransactionsEnd(t, s)
	if pages, plan := readTwice(20000); pages > 250 {
		t.Errorf("the first page of the queue read %d pages past 20,000 started jobs; want at most 250:\n%s", pages, plan)
	}
}

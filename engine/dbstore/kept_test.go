package dbstore

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// postgresPooledDSN is a database of its own reached as through a
// transaction pooler: search_path cannot pass a pooler, so a schema will not
// do.
func postgresPooledDSN(t testing.TB) string { return postgresDatabaseDSN(t) + "&pooler=transaction" }

// A batch of transitions on MySQL, and on PostgreSQL reached directly,
// prepares its statements once for the pool and once on each connection
// that runs them, not at every batch; once the pool has closed those
// connections, it prepares them on the new ones. Behind a transaction
// pooler PostgreSQL prepares nothing: the pooler may run a prepared
// statement on another server connection than the one that knows it.
func TestBatchKeepsStatementsPrepared(t *testing.T) {
	backends := []struct {
		name    string
		dialect *dialect
		dsn     func(t testing.TB) string
		kept    bool
		ran     []string // what a start and a finish run
	}{
		{"mysql", mysqlDialect, mysqlDatabaseDSN, true, []string{qJobUpdateMany}},
		{"postgres", postgresDialect, postgresSchemaDSN, true, []string{qJobStartMany, qJobEndMany}},
		{"postgres-pooled", postgresDialect, postgresPooledDSN, false,
			[]string{qJobStartMany, qJobEndMany}},
	}
	// The counts of the backends share one wrapper; run them one at a time.
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, name := range b.ran {
				testBatchKeepsStatementsPrepared(t, b.dialect, b.dsn(t), b.kept, name)
			}
		})
	}
}

// testBatchKeepsStatementsPrepared counts the preparations of the
// statement name, one that a start or a finish runs.
func testBatchKeepsStatementsPrepared(t *testing.T, d *dialect, dsn string, kept bool, name string) {
	ctx := t.Context()
	setup := migrated(t, openStore(t, dsn))
	s, err := OpenWith(ctx, dsn, OpenOptions{driver: countingDriverName(t, d)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	update := s.queries[name].text
	countingTotal.reset()
	startAndFinish := func() {
		t.Helper()
		j := insertQueued(t, setup)
		started, err := s.JobStartMany(ctx, []engine.JobUpdate{engine.QueuedStartUpdate(j, "n1")})
		if err != nil || started[0].Err != nil {
			t.Fatalf("start of job %d: %v, %v", j.ID, err, started)
		}
		finish := engine.OutcomeUpdate(started[0].Job, engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceeded}, false, nil)
		finished, err := s.JobUpdateManyQuiet(ctx, []engine.JobUpdate{finish})
		if err != nil || finished[0].Err != nil {
			t.Fatalf("finish of job %d: %v, %v", j.ID, err, finished)
		}
		if got, err := setup.JobGet(ctx, j.ID); err != nil || got.Status != engine.StatusFinished {
			t.Fatalf("job %d after its finish: %+v, %v; want FINISHED", j.ID, got, err)
		}
	}
	const rounds = 20
	for range rounds {
		startAndFinish()
	}
	if !kept {
		if n := countingTotal.preparations(update); n != 0 {
			t.Errorf("%d batches prepared %s %d times; want none", 2*rounds, name, n)
		}
		return
	}
	// Once for the pool, and at most once on each of its connections.
	most := 1 + s.db.Stats().MaxOpenConnections
	if n := countingTotal.preparations(update); n < 1 || n > most {
		t.Errorf("%d batches prepared %s %d times; want from 1 to %d", 2*rounds, name, n, most)
	}

	// The connections close, and with them what was prepared on them.
	s.SetIdleConns(s.db.Stats().MaxOpenConnections, time.Millisecond)
	waitfor.Until(t, 30*time.Second, "the pool to close its idle connections", func() bool {
		return s.db.Stats().OpenConnections == 0
	})
	countingTotal.reset()
	startAndFinish()
	if n := countingTotal.preparations(update); n != 1 {
		t.Errorf("a batch on a new connection prepared %s %d times; want once", name, n)
	}
}

// The reads of every dispatch round that take no parameters run as
// prepared on PostgreSQL reached directly, once a batch has kept the
// statements: each is prepared at most once for the pool and once on each
// connection, however many rounds read it. Behind a transaction pooler
// none is prepared.
func TestRoundReadsRunPreparedOnPostgres(t *testing.T) {
	for _, b := range []struct {
		name string
		dsn  func(t testing.TB) string
		kept bool
	}{
		{"postgres", postgresSchemaDSN, true},
		{"postgres-pooled", postgresPooledDSN, false},
	} {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			dsn := b.dsn(t)
			setup := migrated(t, openStore(t, dsn))
			s, err := OpenWith(ctx, dsn, OpenOptions{driver: countingDriverName(t, postgresDialect)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			j := insertQueued(t, setup)
			countingTotal.reset()
			if started, err := s.JobStartMany(ctx, []engine.JobUpdate{engine.QueuedStartUpdate(j, "n1")}); err != nil || started[0].Err != nil {
				t.Fatalf("start of job %d: %v, %v", j.ID, err, started)
			}
			insertQueued(t, setup)
			const rounds = 20
			for range rounds {
				if qs, err := s.JobQueueLoads(ctx); err != nil || len(qs) != 1 {
					t.Fatalf("JobQueueLoads = %+v, %v; want the one queue", qs, err)
				}
				if _, err := s.NodeList(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := s.TypeLimitList(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := s.ReservationList(ctx); err != nil {
					t.Fatal(err)
				}
			}
			most := 1 + s.db.Stats().MaxOpenConnections
			for _, name := range []string{qJobQueueLoads, qNodeList, qTypeLimitList, qReservationList} {
				n := countingTotal.preparations(s.queries[name].text)
				switch {
				case b.kept && (n < 1 || n > most):
					t.Errorf("%d rounds prepared %s %d times; want from 1 to %d", rounds, name, n, most)
				case !b.kept && n != 0:
					t.Errorf("%d rounds prepared %s %d times; want none", rounds, name, n)
				}
			}
		})
	}
}

package dbstore

import (
	"context"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// registerNode registers a node named name on s.
func registerNode(t *testing.T, s *Store, name string) {
	t.Helper()
	_, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: engine.Node{
		Name: name, URL: "http://127.0.0.1:1", MaxLoad: 1, MaxJobs: 1, Weight: 100,
		State: engine.NodeOnline, Lease: engine.Duration(10 * time.Second)}})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

// TestSQLiteLivenessGoesAheadOfQueuedWrites: on SQLite, where this
// process's writes take turns on the one write lock, a node's liveness
// write and the lease wait for the write in progress only, never for the
// writes queued before them: a long queue of job work cannot make a node
// miss its node lease. Every write here blocks until the test lets it go,
// so the order is seen, not timed.
func TestSQLiteLivenessGoesAheadOfQueuedWrites(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	registerNode(t, s, "n1")
	ctx := t.Context()

	// blockedWrite is a write transaction that, once it has the turn,
	// says so and holds it until gate closes.
	var started atomic.Int32
	blockedWrite := func(gate chan struct{}, done chan error) {
		done <- s.Tx(ctx, func(tx engine.TxStore) error {
			started.Add(1)
			_, err := tx.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
			<-gate
			return err
		})
	}
	inProgress, inProgressDone := make(chan struct{}), make(chan error, 1)
	go blockedWrite(inProgress, inProgressDone)
	waitfor.Until(t, time.Minute, "the first write to start", func() bool { return started.Load() == 1 })

	queuedGate, queuedDone := make(chan struct{}), make(chan error, 5)
	defer close(queuedGate)
	for i := range 5 {
		go blockedWrite(queuedGate, queuedDone)
		waitfor.Until(t, time.Minute, "the queued writes to wait", func() bool { _, q := s.writes.waiting(); return q == i+1 })
	}
	touched, leased := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: "n1"})
		touched <- err
	}()
	waitfor.Until(t, time.Minute, "the liveness write to wait", func() bool { u, _ := s.writes.waiting(); return u == 1 })
	go func() {
		_, err := s.LeaseAcquire(ctx, "n1", 10*time.Second)
		leased <- err
	}()
	waitfor.Until(t, time.Minute, "the lease to wait", func() bool { u, _ := s.writes.waiting(); return u == 2 })

	close(inProgress)
	if err := <-inProgressDone; err != nil {
		t.Fatalf("the write in progress: %v", err)
	}
	// A queued write that had the turn first would hold it for good, with
	// an urgent write still waiting behind it. Once both urgent writes are
	// done, the queued ones may take turns: started is read first, so a
	// queued write counted there had the turn before the urgent writes
	// were seen waiting.
	var overtaken bool
	waitfor.Until(t, time.Minute, "the liveness write and the lease", func() bool {
		had := started.Load()
		urgent, _ := s.writes.waiting()
		overtaken = had > 1 && urgent > 0
		return overtaken || len(touched) == 1 && len(leased) == 1
	})
	if overtaken {
		t.Fatal("a queued job write had the turn before the liveness write or the lease")
	}
	for what, done := range map[string]chan error{"liveness write": touched, "lease acquisition": leased} {
		if err := <-done; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}

// TestPostgresControlWithTheMainPoolBlocked: a node's liveness write and
// the lease go through while every connection of its main pool waits on a
// lock another session holds on the jobs table, as job work does when the
// database is slow: they have a connection of their own and touch no job.
func TestPostgresControlWithTheMainPoolBlocked(t *testing.T) {
	t.Parallel()
	dsn := postgresSchemaDSN(t)
	s := migrated(t, openStore(t, dsn))
	registerNode(t, s, "n1")
	other := openStore(t, dsn)
	locker, err := other.db.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = locker.Rollback() }()
	if _, err := locker.ExecContext(t.Context(), "LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	blocked, cancelBlocked := context.WithCancel(t.Context())
	defer cancelBlocked()
	mainConns := s.db.Stats().MaxOpenConnections
	for range mainConns {
		go func() { _, _ = s.JobList(blocked, engine.JobListParams{}) }()
	}
	waitfor.Until(t, time.Minute, "the main pool's connections to wait on the lock", func() bool {
		st := s.db.Stats()
		return st.InUse == mainConns
	})

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	touched, err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: "n1", LoadAvg: 1.5})
	if err != nil || touched.State != engine.NodeOnline {
		t.Fatalf("NodeTouch with the main pool blocked: %+v, %v", touched, err)
	}
	term, err := s.LeaseAcquire(ctx, "n1", 10*time.Second)
	if err != nil || !term.Held() {
		t.Fatalf("LeaseAcquire with the main pool blocked: %v, %v; want the lease", term, err)
	}
	if ok, err := s.LeaseRelease(ctx, "n1"); err != nil || !ok {
		t.Fatalf("LeaseRelease with the main pool blocked: %v, %v", ok, err)
	}
	if st := s.db.Stats(); st.InUse != mainConns {
		t.Errorf("main pool %+v: still blocked, all %d in use, was expected", st, mainConns)
	}
}

// TestPostgresConnectionBudget: a Store holds at most its budget, all pools
// together: the control connection, the listener while someone listens,
// and the main pool with the rest; the listener closes when the last
// subscription ends. The server's own count (pg_stat_activity, by the
// application_name the Store gives) is what is checked.
func TestPostgresConnectionBudget(t *testing.T) {
	t.Parallel()
	dsn := postgresSchemaDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	app := "jobctl-budget-" + u.Query().Get("search_path")
	const budget = 5
	s, err := OpenWith(t.Context(), dsn, OpenOptions{MaxConns: budget, AppName: app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	migrated(t, s)
	registerNode(t, s, "n1")
	admin := openStore(t, dsn)
	count := func(where string) int {
		var n int
		if err := admin.db.GetContext(t.Context(), &n,
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`+where, app); err != nil {
			t.Fatal(err)
		}
		return n
	}

	if got, want := s.db.Stats().MaxOpenConnections, budget-2; got != want {
		t.Errorf("main pool of %d, want %d: the budget less the control connection and the listener", got, want)
	}
	// Everything at once: the listener, every main connection taken, the
	// control connection.
	listening, stopListening := context.WithCancel(t.Context())
	defer stopListening()
	if _, err := s.JobChanges(listening); err != nil {
		t.Fatal(err)
	}
	var held []*sqlx.Conn
	for range budget - 2 {
		c, err := s.db.Connx(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if _, err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "n1"}); err != nil {
		t.Fatal(err)
	}
	if n := count(""); n != budget {
		t.Errorf("%d connections with everything in use, want %d", n, budget)
	}
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.db.Connx(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("one more main connection: %v, want to wait for one (the pool is full)", err)
	}

	for _, c := range held {
		_ = c.Close()
	}
	stopListening()
	waitfor.Until(t, time.Minute, "the listener to close with its last subscription", func() bool {
		return count(" AND query LIKE 'LISTEN%'") == 0
	})
	// A second subscription opens it again.
	again, stopAgain := context.WithCancel(t.Context())
	defer stopAgain()
	if _, err := s.JobChanges(again); err != nil {
		t.Fatal(err)
	}
	if n := count(" AND query LIKE 'LISTEN%'"); n != 1 {
		t.Errorf("%d listening connections after a new subscription, want 1", n)
	}
}

// TestPostgresPooledStoreDoesNotListen: through a transaction pooler
// (pooler=transaction) JobChanges reports this process's changes only and
// opens no listening connection, and the budget's room for one goes to the
// main pool.
func TestPostgresPooledStoreDoesNotListen(t *testing.T) {
	t.Parallel()
	// A direct connection marked as pooled behaves as it would behind the
	// pooler; search_path cannot pass a pooler, so this needs a database.
	dsn := postgresDatabaseDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	app := "jobctl-pooled-" + u.Path[1:]
	s, err := OpenWith(t.Context(), dsn+"&pooler=transaction", OpenOptions{AppName: app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	migrated(t, s)
	if got, want := s.db.Stats().MaxOpenConnections, DefaultMaxConns-1; got != want {
		t.Errorf("main pool of %d, want %d: the budget less the control connection", got, want)
	}
	changes, err := s.JobChanges(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(time.Minute):
		t.Fatal("no report of this process's own insert")
	}
	var listening int
	if err := s.db.GetContext(t.Context(), &listening,
		`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app); err != nil {
		t.Fatal(err)
	}
	if listening != 0 {
		t.Errorf("%d listening connections behind a transaction pooler, want none", listening)
	}
}

// countedPostgresStore opens a migrated Store on a schema of its own that
// names itself to the server as app followed by the schema, and returns it
// with a count of its connections as the server sees them
// (pg_stat_activity), read on another connection.
func countedPostgresStore(t *testing.T, app string) (*Store, func() int) {
	t.Helper()
	dsn := postgresSchemaDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	app += u.Query().Get("search_path")
	s, err := OpenWith(t.Context(), dsn, OpenOptions{AppName: app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	migrated(t, s)
	admin := openStore(t, dsn)
	return s, func() int {
		var n int
		if err := admin.db.GetContext(t.Context(), &n,
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// TestPostgresIdleConns: the main pool keeps as many connections left
// unused as SetIdleConns says, and closes one handed back beyond that at
// once; those it keeps close once unused for the idle time set last,
// however long the default is. The server's own count is what is checked.
func TestPostgresIdleConns(t *testing.T) {
	t.Parallel()
	s, count := countedPostgresStore(t, "jobctl-idle-")
	s.SetIdleConns(1, time.Hour)
	var held []*sqlx.Conn
	for range 3 {
		c, err := s.db.Connx(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if n := count(); n != 3 {
		t.Fatalf("%d connections with three in use, want 3", n)
	}
	for _, c := range held {
		_ = c.Close()
	}
	waitfor.Until(t, time.Minute, "the pool to close the connections handed back beyond the one it keeps",
		func() bool { return count() == 1 })
	if closed := s.db.Stats().MaxIdleClosed; closed != 2 {
		t.Errorf("%d connections closed as more than the pool keeps, want 2", closed)
	}
	s.SetIdleConns(1, 50*time.Millisecond)
	waitfor.Until(t, time.Minute, "the unused connection to close", func() bool { return count() == 0 })
	if closed := s.db.Stats().MaxIdleTimeClosed; closed != 1 {
		t.Errorf("%d connections closed for their idle time, want 1", closed)
	}
}

// TestPostgresControlTakesTheMainPoolUntilFull: a node's liveness write and
// the lease go through a connection of the main pool while it has room: one
// idle at that moment, else one the pool opens for them. So a node holds
// the connections of its pool and no control connection besides. Only with
// every connection of the pool in use do they open the control connection,
// which closes once unused for its idle time. The server's own count is
// what is checked.
func TestPostgresControlTakesTheMainPoolUntilFull(t *testing.T) {
	t.Parallel()
	s, count := countedPostgresStore(t, "jobctl-borrow-")
	registerNode(t, s, "n1")
	control := func() int {
		if s.controlDB == nil {
			return 0
		}
		return s.controlDB.Stats().OpenConnections
	}
	touchAndLease := func() {
		t.Helper()
		if _, err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "n1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LeaseAcquire(t.Context(), "n1", 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// No connection open: the pool opens one, and keeps it.
	s.SetIdleConns(1, 50*time.Millisecond)
	waitfor.Until(t, time.Minute, "the pool to close its connections", func() bool { return count() == 0 })
	s.SetIdleConns(1, time.Hour)
	touchAndLease()
	if n, st := count(), s.db.Stats(); n != 1 || st.Idle != 1 {
		t.Errorf("%d connections after a touch and the lease with none open, pool %+v; want the pool's 1, idle", n, st)
	}
	// One idle: they take it.
	touchAndLease()
	if n := count(); n != 1 {
		t.Errorf("%d connections after a touch and the lease with a pool connection idle, want that one only", n)
	}
	// Every one in use but the pool has room: it opens one more.
	held, err := s.db.Connx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	touchAndLease()
	if n := count(); n != 2 {
		t.Errorf("%d connections after a touch with the pool's one connection in use, want 2 of the pool", n)
	}
	if got := control(); got != 0 {
		t.Errorf("%d control connections open while the pool had room, want none", got)
	}
	_ = held.Close()

	// The pool full: the control connection opens, and closes once unused
	// for its idle time.
	var full []*sqlx.Conn
	for range s.db.Stats().MaxOpenConnections {
		c, err := s.db.Connx(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		full = append(full, c)
	}
	defer func() {
		for _, c := range full {
			_ = c.Close()
		}
	}()
	touchAndLease()
	if got := control(); got != 1 {
		t.Errorf("%d control connections open with the pool full, want 1", got)
	}
	if n, want := count(), len(full)+1; n != want {
		t.Errorf("%d connections with the pool full and the control connection, want %d", n, want)
	}
	s.SetControlIdleTime(50 * time.Millisecond)
	waitfor.Until(t, time.Minute, "the unused control connection to close", func() bool { return control() == 0 })
}

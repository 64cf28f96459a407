package main_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// pgActivity reads the PostgreSQL server's own view of the connections to
// a cluster's database (pg_stat_activity), from a connection to another
// database, so that it never counts itself.
type pgActivity struct {
	t    *testing.T
	db   *sql.DB
	name string // the cluster's database
}

func newPGActivity(t *testing.T, c *cluster) *pgActivity {
	t.Helper()
	u, err := url.Parse(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &pgActivity{t: t, db: db, name: name}
}

// count counts the connections to the database that match where (SQL over
// pg_stat_activity's columns, with $2 for arg).
func (a *pgActivity) count(where string, arg any) int {
	a.t.Helper()
	var n int
	if err := a.db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND `+where, a.name, arg).Scan(&n); err != nil {
		a.t.Fatalf("pg_stat_activity: %v", err)
	}
	return n
}

// of counts the connections of one node, which names itself to the server
// as "jobctl serve NAME".
func (a *pgActivity) of(node string) int {
	return a.count("application_name = $2", "jobctl serve "+node)
}

// settlesAt waits until a node holds at most ceiling connections: the main
// pool closes what it has not used for a few seconds, so an idle node gets
// there on its own. It fails only if the node never does within a minute.
func (a *pgActivity) settlesAt(node string, ceiling int, what string) {
	a.t.Helper()
	last := -1
	if !waitfor.Within(time.Minute, func() bool {
		last = a.of(node)
		if last == 0 {
			// Every node keeps its own connection: none seen means the
			// server does not know the node by its name.
			a.t.Fatalf("no connection of %s %s in pg_stat_activity (application_name %q)", what, node, "jobctl serve "+node)
		}
		return last <= ceiling
	}) {
		a.t.Fatalf("%s %s holds %d connections after a minute, want at most %d", what, node, last, ceiling)
	}
}

// TestIdleNodesHoldOneConnection: an idle node that does not hold the
// lease holds at most one connection to PostgreSQL, whether or not it is a
// dispatch candidate, and no LISTEN connection: the lease holder alone
// listens. Heartbeats come at their default pace of a minute.
func TestIdleNodesHoldOneConnection(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	pg := newPGActivity(t, c)
	c.serve("holder", "--heartbeat-interval", "1m")
	c.eventually(30*time.Second, "holder to hold the lease", func() bool { return c.lease().Owner == "holder" })
	c.serve("candidate", "--heartbeat-interval", "1m")
	c.serve("worker", "--dispatch-interval", "0")
	id := c.submit("--type", "noop")
	c.waitStatus(id, "FINISHED", 30*time.Second)

	pg.settlesAt("candidate", 1, "an idle dispatch candidate")
	pg.settlesAt("worker", 1, "an idle worker")
	if n := pg.count("application_name = $2 AND query LIKE 'LISTEN%'", "jobctl serve holder"); n != 1 {
		t.Errorf("the lease holder has %d LISTEN connections, want 1", n)
	}
	if n := pg.count("query LIKE 'LISTEN%' AND application_name <> $2", "jobctl serve holder"); n != 0 {
		t.Errorf("%d LISTEN connections of nodes that do not hold the lease, want none", n)
	}
}

// TestBusyWorkerHoldsOneConnection: a node at work that does not hold the
// lease holds one connection once its jobs run: its liveness borrows the
// pool connection its job work keeps open, so its own connection closes.
// Its liveness still advances all along.
func TestBusyWorkerHoldsOneConnection(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	pg := newPGActivity(t, c)
	c.serve("holder", "--heartbeat-interval", "1m")
	c.eventually(30*time.Second, "holder to hold the lease", func() bool { return c.lease().Owner == "holder" })
	// Only the worker runs exec jobs; its node lease of 2s lets its own
	// connection close after a second unused.
	c.serve("worker", "--dispatch-interval", "0", "--exec", "--node-lease", "2s", "--heartbeat-interval", "1m")
	g := newGate(t)
	ids := []string{c.submit("--", "sh", "-c", g.script()), c.submit("--", "sh", "-c", g.script())}
	for _, id := range ids {
		if j := c.waitStatus(id, "RUNNING", 30*time.Second); j.Node != "worker" {
			t.Fatalf("job %s runs on %s, want worker", id, j.Node)
		}
	}
	// Its reconcile loop reads its jobs every poll interval, on the pool.
	pg.settlesAt("worker", 1, "a busy worker")

	db, err := sql.Open("postgres", c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lastSeen := func() time.Time {
		var seen time.Time
		if err := db.QueryRow("SELECT last_seen FROM nodes WHERE name = 'worker'").Scan(&seen); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	from := lastSeen()
	c.eventually(time.Minute, "the worker to record its liveness again", func() bool { return lastSeen().After(from) })
	g.open(t)
	for _, id := range ids {
		if j := c.waitStatus(id, "FINISHED", time.Minute); j.Attempt != 1 {
			t.Errorf("job %s ended at attempt %d, want 1", id, j.Attempt)
		}
	}
}

// TestIdleLeaseHolderHoldsAtMostFourConnections: the idle lease holder
// holds at most four connections: its own (liveness and lease), its LISTEN
// connection, and the two its dispatch rounds may use at once.
func TestIdleLeaseHolderHoldsAtMostFourConnections(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	pg := newPGActivity(t, c)
	c.serve("holder", "--heartbeat-interval", "1m", "--dispatch-interval", "2s")
	c.eventually(30*time.Second, "holder to hold the lease", func() bool { return c.lease().Owner == "holder" })
	id := c.submit("--type", "noop")
	c.waitStatus(id, "FINISHED", 30*time.Second)
	pg.settlesAt("holder", 4, "the idle lease holder")
}

// TestBusyNodeStaysWithinItsConnections: a node burning through a queue,
// dispatching and running jobs at once, never holds more than its
// connection budget: 6 by default, --db-max-conns when given.
func TestBusyNodeStaysWithinItsConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		ceiling int
	}{
		{"default", nil, 6},
		{"db-max-conns", []string{"--db-max-conns", "3"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := postgresCluster(t)
			pg := newPGActivity(t, c)
			c.serve("busy", append([]string{"--max-jobs", "50", "--max-load", "50", "--exec"}, tc.args...)...)
			// Jobs that report progress and write a log, so every path to
			// the database is busy while the queue drains.
			var batch strings.Builder
			for range 300 {
				batch.WriteString(`{"type":"exec","args":["sh","-c","echo jobctl:progress 50; echo out"]}` + "\n")
			}
			for range 2000 {
				batch.WriteString(`{"type":"noop"}` + "\n")
			}
			batchFile := t.TempDir() + "/jobs.jsonl"
			if err := os.WriteFile(batchFile, []byte(batch.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			c.ok("submit", "--batch", batchFile)
			most := 0
			c.eventually(5*time.Minute, "the queue to drain", func() bool {
				most = max(most, pg.of("busy"))
				if most > tc.ceiling {
					t.Fatalf("the busy node holds %d connections, want at most %d", most, tc.ceiling)
				}
				return strings.TrimSpace(c.ok("list", "-q", "--state", "queued,restart,running", "--limit", "0")) == ""
			})
			t.Logf("at most %d connections seen while busy (budget %d)", most, tc.ceiling)
			if most < 2 {
				t.Errorf("at most %d connections of the busy node seen: the count does not see the node at work", most)
			}
			if n := strings.Count(c.ok("list", "-q", "--state", "finished", "--limit", "0"), "\n"); n != 2300 {
				t.Errorf("%d jobs finished, want 2300", n)
			}
		})
	}
}

// TestLivenessWhileJobWorkIsBlocked: a node whose every connection for job
// work waits on a lock another session holds on the jobs table (a stuck
// migration, a long report) goes on recording its liveness on its own
// connection, for three node leases and more: it never fences itself, and
// its running jobs go on.
func TestLivenessWhileJobWorkIsBlocked(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	pg := newPGActivity(t, c)
	n := c.serve("n1", "--exec", "--node-lease", "2s")
	g := newGate(t)
	ids := []string{c.submit("--", "sh", "-c", g.script()), c.submit("--", "sh", "-c", g.script())}
	for _, id := range ids {
		c.waitStatus(id, "RUNNING", 30*time.Second)
	}

	db, err := sql.Open("postgres", c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback() }()
	if _, err := lock.Exec("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var from time.Time
	if err := db.QueryRow("SELECT clock_timestamp()").Scan(&from); err != nil {
		t.Fatal(err)
	}
	// Its reconcile loop checks the running jobs every poll interval, its
	// dispatcher reads the queue: all of the node's pool for job work ends
	// up waiting on the lock (the budget of 6 less its own connection and
	// its LISTEN connection).
	c.eventually(time.Minute, "every connection of n1's pool to wait on the lock", func() bool {
		return pg.count("application_name = $2 AND wait_event_type = 'Lock'", "jobctl serve n1") >= 4
	})
	c.eventually(2*time.Minute, "n1 to record its liveness through three node leases of the lock", func() bool {
		var seen time.Time
		if err := db.QueryRow("SELECT last_seen FROM nodes WHERE name = 'n1'").Scan(&seen); err != nil {
			t.Fatal(err)
		}
		return seen.Sub(from) > 6*time.Second
	})
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}

	for _, id := range ids {
		if j := c.show(id); j.Status != "RUNNING" || j.Attempt != 1 {
			t.Errorf("job %s is %s, attempt %d; want still RUNNING, attempt 1", id, j.Status, j.Attempt)
		}
	}
	if strings.Contains(n.log.String(), "could not record liveness") {
		t.Errorf("n1 fenced itself while its job work waited:\n%s", n.log.String())
	}
	g.open(t)
	for _, id := range ids {
		if j := c.waitStatus(id, "FINISHED", time.Minute); j.Attempt != 1 {
			t.Errorf("job %s ended at attempt %d, want 1", id, j.Attempt)
		}
	}
}

// TestPgBouncerTransactionMode: jobctl works through PgBouncer in
// transaction mode with pooler=transaction in its DSN: processes migrate a
// new database through it at once, nodes behind it run jobs submitted,
// listed and waited for through it, the dispatcher polls instead of
// listening, and the server sees no more connections than the pool holds.
func TestPgBouncerTransactionMode(t *testing.T) {
	t.Parallel()
	direct := postgresCluster(t)
	const poolSize = 4
	c := &cluster{t: t, dsn: startPgBouncer(t, direct, poolSize)}
	pg := newPGActivity(t, direct)

	// Two migrations at once, each under a transaction's lock only.
	migrated := make(chan result, 2)
	for range 2 {
		go func() { migrated <- c.run("db", "migrate") }()
	}
	for range 2 {
		if r := <-migrated; r.code != 0 {
			t.Fatalf("db migrate through pgbouncer: exit %d\n%s", r.code, r.stderr)
		}
	}
	n1 := c.serve("n1", "--exec")
	c.serve("n2", "--exec", "--dispatch-interval", "0")
	var ids []string
	for i := range 20 {
		ids = append(ids, c.submit("--", "sh", "-c", fmt.Sprintf("echo job %d", i)))
	}
	if r := c.run(append([]string{"wait", "--timeout", "2m"}, ids...)...); r.code != 0 {
		t.Fatalf("wait through pgbouncer: exit %d\n%s", r.code, r.stderr)
	}
	ran := map[string]int{}
	for _, id := range ids {
		ran[c.show(id).Node]++
	}
	if ran["n1"]+ran["n2"] != len(ids) {
		t.Errorf("jobs ran on %v, want all on n1 and n2", ran)
	}
	if got := strings.TrimSpace(c.ok("logs", ids[3])); got != "job 3" {
		t.Errorf("logs through pgbouncer: %q, want %q", got, "job 3")
	}
	if n := strings.Count(c.ok("list", "-q", "--state", "finished"), "\n"); n != len(ids) {
		t.Errorf("list through pgbouncer: %d finished, want %d", n, len(ids))
	}
	if !strings.Contains(n1.log.String(), "node online") {
		t.Errorf("n1's log says nothing of coming online:\n%s", n1.log.String())
	}
	if n := pg.count("query LIKE $2", "LISTEN%"); n != 0 {
		t.Errorf("%d LISTEN connections behind a transaction pooler, want none", n)
	}
	if n := pg.count("backend_type = $2", "client backend"); n > poolSize {
		t.Errorf("%d server connections to the database, want at most the pool's %d", n, poolSize)
	}
}

package node

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// testNode is a node runtime accepting work on a fresh SQLite store, without its
// background loops, so tests drive the handshake directly.
func testNode(t testing.TB, mutate func(*Config), opts ...Option) (*Runtime, engine.Store) {
	t.Helper()
	s := testStore(t)
	return testNodeOn(t, s, mutate, opts...), s
}

// testStore is a fresh, migrated SQLite store.
func testStore(t testing.TB) engine.Store {
	t.Helper()
	ctx := context.Background()
	s, err := dbstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// testNodeOn is testNode on a store of the caller's.
func testNodeOn(t testing.TB, s engine.Store, mutate func(*Config), opts ...Option) *Runtime {
	t.Helper()
	return testNodeLogging(t, s, io.Discard, mutate, opts...)
}

// testNodeLogging is testNodeOn with what the node logs written to w.
func testNodeLogging(t testing.TB, s engine.Store, w io.Writer, mutate func(*Config), opts ...Option) *Runtime {
	t.Helper()
	cfg := Defaults()
	cfg.Name, cfg.MaxLoad, cfg.Exec = "n1", 2, true
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := New(cfg, s, engine.SystemClock{}, slog.New(slog.NewTextHandler(w, nil)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	n.token = "secret-token"
	n.runner.books.SetReady(true)
	t.Cleanup(func() { n.runner.runsDone.Wait() })
	return n
}

// offerFor inserts a queued job and makes the offer of it a dispatcher
// holding no lease term makes.
func offerFor(t testing.TB, s engine.Store, p engine.JobInsertParams) engine.DispatchOffer {
	t.Helper()
	p.Status = engine.StatusQueued
	job, err := s.JobInsert(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return engine.OfferOf(job, engine.LeaseTerm{})
}

func waitJob(t *testing.T, s engine.Store, id int64, done func(*engine.Job) bool) *engine.Job {
	t.Helper()
	var j *engine.Job
	ended := waitfor.Within(10*time.Second, func() bool {
		var err error
		if j, err = s.JobGet(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return done(j)
	})
	if !ended {
		t.Fatalf("job %d stuck in %s", id, j.Status)
	}
	return j
}

// stopRuns ends a test's runs the way a node shutdown does, once their
// processes have started.
func stopRuns(n *Runtime) {
	waitStarted(n)
	n.runner.mu.Lock()
	defer n.runner.mu.Unlock()
	for _, ar := range n.runner.runs {
		if ar.run != nil {
			ar.shutdown = true
			ar.run.Cancel("test over", time.Second)
		}
	}
}

// waitStarted waits until every run on the node's books has its process:
// an accepted run is started apart from its offer's answer.
func waitStarted(n *Runtime) {
	waitfor.Within(30*time.Second, func() bool {
		n.runner.mu.Lock()
		defer n.runner.mu.Unlock()
		for _, ar := range n.runner.runs {
			if ar.run == nil {
				return false
			}
		}
		return true
	})
}

// waitBegun waits until the run of job the node accepted has begun: its
// process or builtin started and its start counted. The offer is answered
// before that, as the run starts apart.
func waitBegun(t *testing.T, n *Runtime, job int64) {
	t.Helper()
	n.runner.mu.Lock()
	ar := n.runner.runs[job]
	n.runner.mu.Unlock()
	if ar == nil {
		t.Fatalf("job %d has no run on the node", job)
	}
	select {
	case <-ar.begun:
	case <-time.After(30 * time.Second):
		t.Fatalf("the run of job %d did not begin within 30s", job)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects what a node logs, safe for the node's goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

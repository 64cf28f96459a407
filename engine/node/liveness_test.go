package node

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// TestLivenessOutrunsQueuedWrites: a node whose store is flooded with slow
// write transactions (on SQLite, where this process's writes take turns on
// the one write lock, a queue two node leases long) still records its
// liveness every time and never fences itself: its running job goes on,
// untouched. In the order the writes asked, each liveness write would wait
// for the whole queue and the node would lapse at once.
func TestLivenessOutrunsQueuedWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := dbstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Long enough that a machine busy with other work still runs the
	// touch loop within it: what is tested is the write queue, not the CPU.
	const lease = 5 * time.Second
	cfg := Defaults()
	cfg.Name, cfg.Listen, cfg.MaxLoad, cfg.Exec, cfg.MaxLoadAvg = "n1", "127.0.0.1:0", 2, true, 0
	cfg.DispatchInterval, cfg.NodeLease, cfg.ShutdownGrace = 0, lease, 100*time.Millisecond
	cfg.StateDir = t.TempDir()
	logs := &logBuffer{}
	n, err := New(cfg, s, engine.SystemClock{}, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	running, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- n.Run(running) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("node: %v", err)
		}
	})
	waitfor.Until(t, 30*time.Second, "the node to take work", func() bool { return n.runner.books.Ready() })
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Load: 1, MaxAttempts: 1,
		Args: []string{"sleep", "600"}})
	if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusRunning })

	// The flood: 40 writers, each holding the write turn a twentieth of
	// the node lease per transaction, so the queue is two node leases long.
	flood, stopFlood := context.WithCancel(ctx)
	var writers sync.WaitGroup
	defer func() { stopFlood(); writers.Wait() }()
	for range 40 {
		writers.Go(func() {
			for flood.Err() == nil {
				_ = s.Tx(flood, func(tx engine.TxStore) error {
					_, err := tx.JobInsert(flood, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusInstantiated})
					time.Sleep(lease / 20)
					return err
				})
			}
		})
	}
	from, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Three node leases of the flood, on the database's clock, as the
	// node's own liveness shows them.
	waitfor.Until(t, 60*time.Second, "the node to record its liveness through three node leases of the flood", func() bool {
		me, err := s.NodeGet(ctx, "n1")
		return err == nil && me.LastSeen.Sub(from) > 3*lease
	})
	stopFlood()
	writers.Wait()

	if strings.Contains(logs.String(), "could not record liveness") || n.fence.lapsedNow() {
		t.Errorf("the node fenced itself while its writes queued:\n%s", logs.String())
	}
	j, err := s.JobGet(ctx, o.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != engine.StatusRunning || j.Attempt != 1 {
		t.Errorf("the running job is %s, attempt %d; want still RUNNING, attempt 1", j.Status, j.Attempt)
	}
}

// TestOrphanCheckWaitsSpreadAroundTheInterval: the looks for orphaned jobs
// of nodes started together spread over half to one and a half intervals,
// whatever the random source gives.
func TestOrphanCheckWaitsSpreadAroundTheInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		random float64
		want   time.Duration
	}{
		{0, orphanCheckInterval / 2},
		{0.5, orphanCheckInterval},
		{0.999, orphanCheckInterval*3/2 - orphanCheckInterval/1000},
	} {
		if got := orphanCheckWait(func() float64 { return tc.random }); got != tc.want {
			t.Errorf("random %v: wait %s, want %s", tc.random, got, tc.want)
		}
	}
}

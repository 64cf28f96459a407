//go:build unix

package node

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// BenchmarkNoopBurst is a node's cost per job in a burst of noop jobs
// offered in batches of 500: accepted, started, ended and recorded. One op
// is one job. On SQLite the store's share dominates; on the in-memory store
// what is left is mostly the node's own.
func BenchmarkNoopBurst(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		n, s := testNode(b, roomy)
		noopBurst(b, n, s)
	})
	b.Run("memory", func(b *testing.B) {
		s := memstore.New(engine.SystemClock{})
		noopBurst(b, testNodeOn(b, s, roomy), s)
	})
}

// roomy lets a node take any burst at once.
func roomy(c *Config) { c.MaxLoad, c.MaxJobs = 1e9, 1<<30 }

func noopBurst(b *testing.B, n *Runtime, s engine.Store) {
	ctx := context.Background()
	offers := dispatchingNoops(b, s, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	for batch := range slices.Chunk(offers, 500) {
		for _, res := range n.runner.AcceptBatch(ctx, batch) {
			if res.Verdict != engine.OfferAccepted {
				b.Fatal(res)
			}
		}
	}
	n.runner.runsDone.Wait()
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU the process has used: on a machine others share, a
// steadier figure than the time the burst took.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// dispatchingNoops inserts count queued noop jobs and returns the offers
// of them a dispatcher makes.
func dispatchingNoops(b *testing.B, s engine.Store, count int) []engine.DispatchOffer {
	b.Helper()
	ctx := context.Background()
	var jobs []*engine.Job
	err := s.Tx(ctx, func(tx engine.TxStore) error {
		jobs = jobs[:0]
		for range count {
			j, err := tx.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, Status: engine.StatusQueued, MaxAttempts: 1})
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	offers := make([]engine.DispatchOffer, len(jobs))
	for i, j := range jobs {
		offers[i] = engine.OfferOf(j, engine.LeaseTerm{})
	}
	return offers
}

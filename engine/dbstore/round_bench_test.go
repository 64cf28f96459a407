package dbstore

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// BenchmarkRoundBacklogPostgres measures a dispatch round on PostgreSQL on
// a cluster that is nearly full, as a busy one is, against the length of
// the queue behind it: 100 nodes of max load 8 and max jobs 200, each with
// 1 to 3 of its load free, and a queue of jobs of loads 1 to 4. Each round
// places what fits; then, outside the timing, the jobs it started end and
// as many new ones are queued, so every round meets the same cluster and
// the same backlog. It reports per round the jobs read from the queue
// (rows/round) and placed (placed/round), and the time, which must not grow
// with the backlog: 1,000 to 1,000,000 jobs (the largest takes minutes to
// fill: go test -bench 'RoundBacklogPostgres/backlog=1000000' -benchtime 20x).
func BenchmarkRoundBacklogPostgres(b *testing.B) {
	for _, backlog := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			ctx := context.Background()
			s := migrated(b, openStore(b, postgresSchemaDSN(b)))
			rng := rand.New(rand.NewPCG(1, 2))
			load := func(int) float64 { return float64(1 + rng.IntN(4)) }
			for i := range 100 {
				name := fmt.Sprintf("n%03d", i)
				if _, err := engine.RegisterNode(ctx, s, engine.NodeRegisterParams{Node: engine.Node{Name: name, URL: "http://" + name,
					MaxLoad: 8, MaxJobs: 200, Weight: 100, AcceptExceeding: true,
					Services: []engine.NodeService{{Type: engine.TypeSleep}}}}); err != nil {
					b.Fatal(err)
				}
				for _, id := range queueJobs(b, s, 1, func(int) float64 { return float64(5 + i%3) }) {
					j, err := s.JobGet(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(j, name)); err != nil {
						b.Fatal(err)
					}
				}
			}
			queueJobs(b, s, backlog, load)
			if _, err := s.db.ExecContext(ctx, "ANALYZE jobs"); err != nil {
				b.Fatal(err)
			}
			d := dispatch.NewDispatcher(s, startingOfferer{s}, placement.LoadFactor{}, engine.SystemClock{}, discardLog())
			var read, placed int
			for b.Loop() {
				stats, err := d.Round(ctx, func() bool { return true })
				if err != nil {
					b.Fatal(err)
				}
				read += stats.Read
				placed += stats.Dispatched
				b.StopTimer()
				endNewest(b, s, stats.Dispatched)
				queueJobs(b, s, stats.Dispatched, load)
				b.StartTimer()
			}
			b.ReportMetric(float64(read)/float64(b.N), "rows/round")
			b.ReportMetric(float64(placed)/float64(b.N), "placed/round")
		})
	}
}

// startingOfferer accepts every offer and starts the node's share in one
// statement, as a node's acceptance does.
type startingOfferer struct{ s *Store }

func (o startingOfferer) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	us := make([]engine.JobUpdate, len(offers))
	for i, of := range offers {
		us[i] = engine.StartOfferUpdate(of, n.Name)
	}
	out := make([]engine.OfferResult, len(offers))
	results, err := o.s.JobUpdateMany(ctx, us)
	for i := range out {
		if err != nil || results[i].Err != nil {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone}
		}
	}
	return out
}

// queueJobs queues n sleep jobs of load(i) in bulk.
func queueJobs(b testing.TB, s *Store, n int, load func(int) float64) []int64 {
	b.Helper()
	var ids []int64
	for start := 0; start < n; start += engine.SubmitChunk {
		ps := make([]engine.JobInsertParams, min(engine.SubmitChunk, n-start))
		for i := range ps {
			ps[i] = engine.JobInsertParams{Type: engine.TypeSleep, Load: load(start + i), Status: engine.StatusQueued}
		}
		got, err := s.JobInsertMany(context.Background(), ps)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, got...)
	}
	return ids
}

// endNewest ends the n newest running jobs: those a round just started.
func endNewest(b testing.TB, s *Store, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	ctx := context.Background()
	running, err := s.JobList(ctx, engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}, Limit: n})
	if err != nil {
		b.Fatal(err)
	}
	us := make([]engine.JobUpdate, len(running))
	for i, j := range running {
		us[i] = engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 })
	}
	if _, err := s.JobUpdateManyQuiet(ctx, us); err != nil {
		b.Fatal(err)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

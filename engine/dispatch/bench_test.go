package dispatch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/placement"
)

// BenchmarkRound measures a dispatch round on SQLite: b.N queued jobs placed
// on 8 nodes with room for all of them, each node's share accepted and
// started in one statement, as a node's acceptance does. Reported per job.
func BenchmarkRound(b *testing.B) {
	for _, jobs := range []int{100, 1000} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				s := newBenchStore(b)
				for i := range 8 {
					addNodeB(b, s, fmt.Sprintf("n%d", i), float64(jobs), engine.TypeNoop)
				}
				for range jobs {
					if _, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, Status: engine.StatusQueued}); err != nil {
						b.Fatal(err)
					}
				}
				d := dispatch.NewDispatcher(s, startingNodes{s}, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
				b.StartTimer()
				stats, err := d.Round(context.Background(), always)
				if err != nil || stats.Dispatched != jobs {
					b.Fatalf("dispatched %d of %d: %v", stats.Dispatched, jobs, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*jobs), "µs/job")
		})
	}
}

// BenchmarkRoundNothingPlaceable measures a round over a long queue that no
// node can take (no node offers the type): it reads none of it.
func BenchmarkRoundNothingPlaceable(b *testing.B) {
	const queued = 10000
	s := newBenchStore(b)
	for i := range 8 {
		addNodeB(b, s, fmt.Sprintf("n%d", i), 4, engine.TypeSleep)
	}
	for range queued {
		if _, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, Status: engine.StatusQueued}); err != nil {
			b.Fatal(err)
		}
	}
	d := newDispatcher(s, &fakeNodes{store: s})
	for b.Loop() {
		stats, err := d.Round(context.Background(), always)
		if err != nil || stats.Read != 0 || stats.Dispatched != 0 || len(stats.Unread) != 1 {
			b.Fatalf("round: %+v, %v", stats, err)
		}
	}
}

// BenchmarkRoundInMemory measures the dispatcher's own cost per job, on the
// in-memory store: 100 nodes with room for 10,000 jobs and a queue of
// 100,000, so a round places 10,000 jobs and stops reading the queue once
// the nodes are full. Reported per placed job.
func BenchmarkRoundInMemory(b *testing.B) {
	const nodes, perNode, queued = 100, 100, 100000
	for range b.N {
		b.StopTimer()
		s := memstore.New(engine.SystemClock{})
		for i := range nodes {
			addNodeAs(b, s, fmt.Sprintf("n%d", i), perNode, func(n *engine.Node) {
				n.MaxJobs = 1 << 30
				n.Services = []engine.NodeService{{Type: engine.TypeNoop}}
			})
		}
		insertQueue(b, s, queued, func(int) float64 { return 1 })
		d := dispatch.NewDispatcher(s, startingNodes{s}, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
		b.StartTimer()
		stats, err := d.Round(context.Background(), always)
		if err != nil || stats.Dispatched != nodes*perNode || !stats.More {
			b.Fatalf("round: %+v, %v", stats, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*perNode), "ns/job")
}

// BenchmarkRoundBacklog measures a round's cost on a cluster that is nearly
// full, as a busy one is, against the length of the queue behind it: 100
// nodes of max load 8 and max jobs 200, each with one slot's worth of room
// (its running jobs leave 1 to 3 load free), and a queue of jobs of loads
// 1 to 4. Each round places what fits; then, outside the timing, the jobs
// it started end and as many new ones are queued, so every round meets the
// same cluster and the same backlog. It reports per round the jobs read
// from the queue (rows/round), the jobs placed (placed/round) and the
// time, which must not grow with the backlog: 1,000 to 1,000,000 jobs.
func BenchmarkRoundBacklog(b *testing.B) {
	for _, backlog := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			ctx := context.Background()
			s := memstore.New(engine.SystemClock{})
			rng := rand.New(rand.NewPCG(1, 2))
			load := func(int) float64 { return float64(1 + rng.IntN(4)) }
			for i := range 100 {
				name := fmt.Sprintf("n%03d", i)
				addNodeAs(b, s, name, 8, func(n *engine.Node) {
					n.MaxJobs = 200
					n.Services = []engine.NodeService{{Type: engine.TypeSleep}}
				})
				// Fill it to 5, 6 or 7 of its 8.
				for _, id := range insertQueue(b, s, 1, func(int) float64 { return float64(5 + i%3) }) {
					j, err := s.JobGet(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(j, name)); err != nil {
						b.Fatal(err)
					}
				}
			}
			insertQueue(b, s, backlog, load)
			d := dispatch.NewDispatcher(s, startingNodes{s}, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
			var read, placed int
			for b.Loop() {
				stats, err := d.Round(ctx, always)
				if err != nil {
					b.Fatal(err)
				}
				read += stats.Read
				placed += stats.Dispatched
				b.StopTimer()
				endPlaced(b, s, stats.Dispatched)
				insertQueue(b, s, stats.Dispatched, load)
				b.StartTimer()
			}
			b.ReportMetric(float64(read)/float64(b.N), "rows/round")
			b.ReportMetric(float64(placed)/float64(b.N), "placed/round")
		})
	}
}

// insertQueue queues n jobs with load(i), of the type the store's first
// node offers: noop or sleep.
func insertQueue(b testing.TB, s engine.Store, n int, load func(int) float64) []int64 {
	b.Helper()
	typ := engine.TypeSleep
	if nodes, err := s.NodeList(context.Background()); err == nil && len(nodes) > 0 && nodes[0].Offers(engine.TypeNoop) {
		typ = engine.TypeNoop
	}
	var ids []int64
	for start := 0; start < n; start += engine.SubmitChunk {
		ps := make([]engine.JobInsertParams, min(engine.SubmitChunk, n-start))
		for i := range ps {
			ps[i] = engine.JobInsertParams{Type: typ, Load: load(start + i), Status: engine.StatusQueued}
		}
		got, err := s.JobInsertMany(context.Background(), ps)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, got...)
	}
	return ids
}

// endPlaced ends the n jobs a round just started (the newest RUNNING ones
// started this round), as their nodes would report them finished.
func endPlaced(b testing.TB, s engine.Store, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	ctx := context.Background()
	running, err := s.JobList(ctx, engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}})
	if err != nil {
		b.Fatal(err)
	}
	// The nodes' own fill jobs are the oldest; the round's are the newest.
	us := make([]engine.JobUpdate, 0, n)
	for _, j := range running[len(running)-n:] {
		us = append(us, engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 }))
	}
	if _, err := s.JobUpdateMany(ctx, us); err != nil {
		b.Fatal(err)
	}
}

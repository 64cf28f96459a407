package dispatch_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
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
// node can take (no node offers the type): the cost of reading and
// filtering every dispatchable job, which every round pays.
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
		if err != nil || stats.Considered != queued || stats.Dispatched != 0 {
			b.Fatalf("round: %+v, %v", stats, err)
		}
	}
}

// BenchmarkRoundInMemory measures the dispatcher's own cost per job, on a
// store held in memory: 100 nodes with room for 10,000 jobs and a queue of
// 100,000, so a round places 10,000 jobs and stops reading the queue once
// the nodes are full. Reported per placed job.
func BenchmarkRoundInMemory(b *testing.B) {
	const nodes, perNode, queued = 100, 100, 100000
	for range b.N {
		b.StopTimer()
		s := newQueueStore(nodes, perNode, queued, 1)
		d := dispatch.NewDispatcher(s, startingNodes{s}, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
		b.StartTimer()
		stats, err := d.Round(context.Background(), always)
		if err != nil || stats.Dispatched != nodes*perNode || !stats.More {
			b.Fatalf("round: %+v, %v", stats, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*perNode), "ns/job")
}

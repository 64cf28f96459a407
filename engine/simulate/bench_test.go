package simulate

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchNodes are n equal nodes of max load 8, up long enough to be warm.
func benchNodes(b *testing.B, n int) []NodeSpec {
	b.Helper()
	nodes := make([]NodeSpec, n)
	for i := range nodes {
		nodes[i] = NodeSpec{Name: fmt.Sprintf("node-%03d", i), MaxLoad: 8, StartedAgo: Duration(time.Hour)}
	}
	if err := CheckNodes(nodes); err != nil {
		b.Fatal(err)
	}
	return nodes
}

// BenchmarkSimulate runs generated workloads that keep the cluster about
// three quarters busy, so the queue stays short and the time goes to the
// rounds, not to an ever-growing backlog. The largest is the million-job
// target (15 s of CPU or less, under 1 GiB resident for the whole
// command): go test -bench 'Simulate/1000000' -benchtime 1x.
func BenchmarkSimulate(b *testing.B) {
	for _, size := range []struct{ jobs, nodes int }{{10_000, 10}, {100_000, 100}, {200_000, 100}, {1_000_000, 100}} {
		b.Run(fmt.Sprintf("%dx%d", size.jobs, size.nodes), func(b *testing.B) {
			// Each node carries 8 / (2.5 mean load × 15.5s mean duration)
			// jobs per second; arrivals come at 75% of that.
			rate := 0.75 * float64(size.nodes) * 8 / (2.5 * 15.5)
			g, err := ParseGenerator(fmt.Sprintf("count=%d,rate=%.3f/s,load=1..4,duration=1s..30s", size.jobs, rate))
			if err != nil {
				b.Fatal(err)
			}
			nodes, jobs := benchNodes(b, size.nodes), g.Jobs(1)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := Run(context.Background(), Config{Nodes: nodes, Jobs: jobs, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				if res.Summary.Placed != size.jobs {
					b.Fatalf("placed %d of %d", res.Summary.Placed, size.jobs)
				}
				b.ReportMetric(float64(res.Rounds), "rounds")
			}
			reportPerJob(b, size.jobs)
		})
	}
}

// BenchmarkSimulateBacklog submits every job at once, so most rounds look
// at a long queue that mostly cannot be placed: a round reads only what
// fits, so the cost follows the work placed, not the queue. The largest is
// the 100,000-job target (10 s of CPU or less, and no more than 12 times
// the CPU of 10,000 jobs on the same nodes):
// go test -bench 'Backlog/10*000x100' -benchtime 1x.
func BenchmarkSimulateBacklog(b *testing.B) {
	for _, size := range []struct{ jobs, nodes int }{{2_000, 10}, {10_000, 10}, {10_000, 100}, {100_000, 100}} {
		b.Run(fmt.Sprintf("%dx%d", size.jobs, size.nodes), func(b *testing.B) {
			g, err := ParseGenerator(fmt.Sprintf("count=%d,load=1..4,duration=1s..30s", size.jobs))
			if err != nil {
				b.Fatal(err)
			}
			nodes, jobs := benchNodes(b, size.nodes), g.Jobs(1)
			b.ReportAllocs()
			for b.Loop() {
				res, err := Run(context.Background(), Config{Nodes: nodes, Jobs: jobs, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Rounds), "rounds")
			}
			reportPerJob(b, size.jobs)
		})
	}
}

// reportPerJob adds the time per job simulated, which stays flat from one
// size to the next when a run costs what its jobs do.
func reportPerJob(b *testing.B, jobs int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(jobs), "ns/job")
}

package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// BenchmarkSourceFetch measures one refresh of a busy cluster on SQLite:
// 100 nodes and 100,000 jobs (two running on every node, 10,000 queued,
// the rest finished). A refresh must stay well under 100 ms.
func BenchmarkSourceFetch(b *testing.B) {
	ctx := context.Background()
	s := openStore(b)
	const nodes, jobs, queued = 100, 100_000, 10_000
	for i := range nodes {
		registerNode(b, s, fmt.Sprintf("node-%03d", i), 8)
	}
	ps := make([]engine.JobInsertParams, 0, 10_000)
	var ids []int64
	for len(ids) < jobs {
		ps = ps[:0]
		for range cap(ps) {
			ps = append(ps, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, Status: engine.StatusQueued, MaxAttempts: 1})
		}
		got, err := s.JobInsertMany(ctx, ps)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, got...)
	}
	// Every job but the newest queued ones starts; all but two per node end.
	started := ids[:jobs-queued]
	runningPerNode := 2
	for from := 0; from < len(started); from += 5000 {
		batch := started[from:min(from+5000, len(started))]
		us := make([]engine.JobUpdate, len(batch))
		for i, id := range batch {
			node := fmt.Sprintf("node-%03d", (from+i)%nodes)
			us[i] = engine.JobUpdate{ID: id, From: engine.StatusQueued, Version: 1, To: engine.StatusRunning,
				Node: &node, IncrementAttempt: true, MarkStarted: true}
		}
		mustApply(b, s, us)
		us = us[:0]
		for i, id := range batch {
			if from+i < nodes*runningPerNode {
				continue
			}
			us = append(us, engine.JobUpdate{ID: id, From: engine.StatusRunning, Version: 2, To: engine.StatusFinished, MarkFinished: true})
		}
		mustApply(b, s, us)
	}
	cases := []struct {
		name  string
		every time.Duration
		q     Query
	}{
		// The usual refresh: the counts of the last few seconds are kept.
		{"cluster", 0, Query{}},
		{"node", 0, Query{Node: "node-042"}},
		{"filter", 0, Query{Statuses: []engine.Status{engine.StatusFinished}}},
		// A refresh that counts the jobs again: one in five at the
		// default interval, and each after an action.
		{"cluster-recount", time.Nanosecond, Query{}},
		{"node-recount", time.Nanosecond, Query{Node: "node-042"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			src := &Source{Store: s, Clock: engine.SystemClock{}, Database: "bench", CountsEvery: c.every}
			var snap *Snapshot
			var worst time.Duration
			for b.Loop() {
				start := time.Now()
				var err error
				if snap, err = src.Fetch(ctx, c.q); err != nil {
					b.Fatal(err)
				}
				worst = max(worst, time.Since(start))
			}
			if len(snap.Nodes) != nodes || len(snap.Jobs) == 0 || len(snap.Jobs) > DefaultPageSize {
				b.Fatalf("snapshot has %d nodes and %d jobs", len(snap.Nodes), len(snap.Jobs))
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
		})
	}
}

func mustApply(b *testing.B, s engine.Store, us []engine.JobUpdate) {
	b.Helper()
	res, err := s.JobUpdateManyQuiet(context.Background(), us)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

package simulate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/placement"
)

func twoNodes(t *testing.T) []NodeSpec {
	t.Helper()
	nodes := []NodeSpec{{Name: "big", MaxLoad: 4}, {Name: "small", MaxLoad: 2}}
	if err := CheckNodes(nodes); err != nil {
		t.Fatal(err)
	}
	return nodes
}

func loadJobs(t *testing.T, text string) []JobSpec {
	t.Helper()
	jobs, err := ReadJobs(strings.NewReader(text), "jobs")
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestLoadFactorPlacement follows loadfactor by hand: each job goes to the
// node with the lowest load factor, a near tie to the larger node; a job
// that fits nowhere waits for the first round after capacity frees up.
func TestLoadFactorPlacement(t *testing.T) {
	t.Parallel()
	jobs := loadJobs(t, `
- {duration: 10s}
- {duration: 10s}
- {duration: 10s}
- {duration: 10s}
- {duration: 10s}
- {duration: 10s}
- {load: 2, duration: 1s}
`)
	res, err := Run(context.Background(), Config{Nodes: twoNodes(t), Jobs: jobs, Selector: "loadfactor"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Placements {
		got = append(got, fmtPlacement(p))
	}
	// Rounds at 0 (places six), 0.05 (nothing), then skipped to 10.05, the
	// first round tick after the jobs end at 10.
	want := []string{"1 big 0-10", "2 small 0-10", "3 big 0-10", "4 big 0-10", "5 small 0-10", "6 big 0-10",
		"7 big 10.05-11.05"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("placements:\n got %v\nwant %v", got, want)
	}
	s := res.Summary
	if s.Placed != 7 || s.NeverPlaced != 0 || s.MakespanS != 11.05 || s.MaxLoadFactor != 1 || s.P99WaitS != 10.05 {
		t.Errorf("summary = %+v", s)
	}
}

func fmtPlacement(p Placement) string {
	end := "never"
	if p.EndS != nil {
		end = trimFloat(*p.EndS)
	}
	return trimFloat(float64(p.Job)) + " " + p.Node + " " + trimFloat(p.StartS) + "-" + end
}

func trimFloat(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestEverySelectorRuns(t *testing.T) {
	t.Parallel()
	g, err := ParseGenerator("count=300,rate=20/s,load=1..3,duration=1s..20s,types=sleep:3,noop:1")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []NodeSpec{
		{Name: "a", MaxLoad: 8, StartedAgo: Duration(time.Hour)},
		{Name: "b", MaxLoad: 4, Weight: 50},
		{Name: "c", MaxLoad: 4, LoadAvg: 1, Cores: 4, Memory: 8 << 30},
	}
	if err := CheckNodes(nodes); err != nil {
		t.Fatal(err)
	}
	for _, name := range placement.SelectorNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), Config{Nodes: nodes, Jobs: g.Jobs(7), Selector: name, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			if res.Selector != name || res.Summary.Placed != 300 || res.Summary.NeverPlaced != 0 {
				t.Errorf("%s: %+v", name, res.Summary)
			}
			if res.Summary.MaxLoadFactor > 1 {
				t.Errorf("%s overcommitted a node: max load factor %v", name, res.Summary.MaxLoadFactor)
			}
			perNode := map[string]int{}
			for _, p := range res.Placements {
				perNode[p.Node]++
			}
			if len(perNode) != 3 {
				t.Errorf("%s used nodes %v; want all three", name, perNode)
			}
		})
	}
}

func TestSameSeedSameResult(t *testing.T) {
	t.Parallel()
	g, err := ParseGenerator("count=500,rate=40/s,load=0.5..3,duration=1s..30s")
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) string {
		res, err := Run(context.Background(), Config{Nodes: twoNodes(t), Jobs: g.Jobs(seed), Selector: "random", Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	if a, b := run(42), run(42); a != b {
		t.Error("two runs with seed 42 differ")
	}
	if a, b := run(42), run(43); a == b {
		t.Error("seeds 42 and 43 gave the same run")
	}
}

func TestNeverEndingAndUnplaceableJobs(t *testing.T) {
	t.Parallel()
	jobs := loadJobs(t, `
- {id: 10, load: 4}
- {id: 11, type: encode}
- {id: 12, load: 1, duration: 1s, submit_at: 5s}
`)
	res, err := Run(context.Background(), Config{Nodes: twoNodes(t), Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Placements {
		got = append(got, fmtPlacement(p))
	}
	// 12 arrives at 5s; the round ticks are 0, 0.05 (after a placement),
	// then every 2s: 6.05 is the first after its arrival.
	want := "10 big 0-never, 12 small 6.05-7.05"
	if strings.Join(got, ", ") != want {
		t.Errorf("placements = %v; want %s", got, want)
	}
	if res.Summary.NeverPlaced != 1 || res.Summary.MakespanS != 7.05 {
		t.Errorf("summary = %+v", res.Summary)
	}
}

// TestKeysAndOversizedJobs runs the engine's coordination rules: jobs of one
// key one at a time in submission order, and an oversized job waiting for
// the largest node to drain, alone, while smaller jobs go elsewhere.
func TestKeysAndOversizedJobs(t *testing.T) {
	t.Parallel()
	jobs := loadJobs(t, `
- {id: 1, key: k, duration: 1s}
- {id: 2, key: k, duration: 1s}
- {id: 3, duration: 3s}
- {id: 4, load: 9, duration: 1s, submit_at: 1s}
- {id: 5, duration: 1s, submit_at: 1s}
`)
	res, err := Run(context.Background(), Config{Nodes: twoNodes(t), Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Placements {
		got = append(got, fmtPlacement(p))
	}
	// Round 0: 1 on big, 3 on small (lower load factor), 2 waits behind 1.
	// 2.05: 1 has ended, so 2 goes to big; 4 is oversized and keeps big
	// for itself once 2 is done; 5 goes to small beside 3. After the quick
	// round at 2.1 the ticks are 4.1, ...: big is idle and runs 4 alone.
	want := "1 big 0-1, 3 small 0-3, 2 big 2.05-3.05, 5 small 2.05-3.05, 4 big 4.1-5.1"
	if strings.Join(got, ", ") != want {
		t.Errorf("placements:\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
	if res.Summary.MaxLoadFactor != 2.25 {
		t.Errorf("max load factor %v; want 9/4 from the oversized job", res.Summary.MaxLoadFactor)
	}
}

// TestFirstChildQueuesAhead: the first child of a parent is offered even to
// full nodes, which decline it in every round until one has room; the
// rounds skipped over decline it as well.
func TestFirstChildQueuesAhead(t *testing.T) {
	t.Parallel()
	jobs := loadJobs(t, `
- {id: 1, load: 4, duration: 10s}
- {id: 2, load: 2, duration: 5s}
- {id: 3, parent: 1, duration: 1s, submit_at: 1s}
`)
	res, err := Run(context.Background(), Config{Nodes: twoNodes(t), Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Placements {
		got = append(got, fmtPlacement(p))
	}
	// Rounds at 2.05 and 4.05 offer 3 to both full nodes; job 2 ends at 5,
	// so the round at 6.05 starts 3 on small.
	if want := "1 big 0-10, 2 small 0-5, 3 small 6.05-7.05"; strings.Join(got, ", ") != want {
		t.Errorf("placements:\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
	if res.Summary.Declines != 4 {
		t.Errorf("declines %d; want 2 nodes × 2 rounds", res.Summary.Declines)
	}
}

// TestPrioritiesOrderAFullCluster: with room for one job at a time, the
// queue goes higher priority first, then oldest first.
func TestPrioritiesOrderAFullCluster(t *testing.T) {
	t.Parallel()
	nodes := []NodeSpec{{Name: "one", MaxLoad: 1}}
	if err := CheckNodes(nodes); err != nil {
		t.Fatal(err)
	}
	jobs := loadJobs(t, `
- {id: 1, duration: 1s}
- {id: 2, duration: 1s}
- {id: 3, duration: 1s, priority: 90}
- {id: 4, duration: 1s, priority: 10}
- {id: 5, duration: 1s, priority: 90}
`)
	res, err := Run(context.Background(), Config{Nodes: nodes, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range res.Placements {
		order = append(order, trimFloat(float64(p.Job)))
	}
	if got, want := strings.Join(order, " "), "3 5 1 2 4"; got != want {
		t.Errorf("placed %s, want %s: by priority, then by age", got, want)
	}
	if _, err := ReadJobs(strings.NewReader("- {id: 1, priority: 101}"), "jobs"); err == nil {
		t.Error("a job of priority 101 was read; want an error")
	}
}

package simulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/placement"
)

// TestPromisesHoldOnRandomWorkloads is the fast deterministic tier of the
// dispatcher and the node acceptance together: random clusters and random
// workloads, every selector, on the in-memory store and a virtual clock,
// checked against what the engine promises whatever the input:
//
//   - no node ever carries more than its max load, except one oversized job
//     running alone (beside jobs of load 0 at most), nor more jobs than its
//     max jobs;
//   - a job runs at most once, on a node that offers its type, and never
//     before it was submitted;
//   - jobs of one key never overlap and start in submission order;
//   - every job that some node could run is placed.
func TestPromisesHoldOnRandomWorkloads(t *testing.T) {
	t.Parallel()
	for seed := range uint64(12) {
		for _, selector := range placement.SelectorNames {
			t.Run(fmt.Sprintf("seed=%d/%s", seed, selector), func(t *testing.T) {
				t.Parallel()
				nodes, jobs := randomCluster(t, seed)
				res, err := Run(context.Background(), Config{Nodes: nodes, Jobs: jobs, Selector: selector, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				checkPromises(t, nodes, jobs, res)
			})
		}
	}
}

// randomCluster draws 2–6 nodes and 20–80 jobs of two types, some keyed,
// some oversized, arriving over a minute.
func randomCluster(t *testing.T, seed uint64) ([]NodeSpec, []JobSpec) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	accept := func() *bool { b := rng.IntN(3) > 0; return &b }
	nodes := make([]NodeSpec, 2+rng.IntN(5))
	for i := range nodes {
		nodes[i] = NodeSpec{
			Name: fmt.Sprintf("n%d", i), MaxLoad: float64(1 + rng.IntN(8)), MaxJobs: 1 + rng.IntN(4),
			Weight: 1 + rng.IntN(100), Services: []string{"a", "b"}[:1+rng.IntN(2)], AcceptExceeding: accept(),
			StartedAgo: Duration(time.Duration(rng.IntN(600)) * time.Second),
		}
	}
	jobs := make([]JobSpec, 20+rng.IntN(61))
	for i := range jobs {
		load := float64(rng.IntN(20)) / 2
		jobs[i] = JobSpec{
			ID: int64(i + 1), Type: []string{"a", "b"}[rng.IntN(2)], Load: &load,
			Duration: Duration(time.Duration(1+rng.IntN(20)) * time.Second),
			SubmitAt: Duration(time.Duration(rng.IntN(60_000)) * time.Millisecond),
		}
		if rng.IntN(3) == 0 {
			jobs[i].Key = fmt.Sprintf("k%d", rng.IntN(3))
		}
	}
	slices.SortStableFunc(jobs, func(x, y JobSpec) int { return int(x.SubmitAt - y.SubmitAt) })
	for i := range jobs {
		jobs[i].ID = int64(i + 1) // submission order is id order, as in the store
	}
	if err := CheckNodes(nodes); err != nil {
		t.Fatal(err)
	}
	if err := CheckJobs(jobs); err != nil {
		t.Fatal(err)
	}
	return nodes, jobs
}

func checkPromises(t *testing.T, nodes []NodeSpec, jobs []JobSpec, res *Result) {
	t.Helper()
	byID := map[int64]*JobSpec{}
	for i := range jobs {
		byID[jobs[i].ID] = &jobs[i]
	}
	spec := map[string]*NodeSpec{}
	for i := range nodes {
		spec[nodes[i].Name] = &nodes[i]
	}
	placed := map[int64]Placement{}
	for _, p := range res.Placements {
		if _, twice := placed[p.Job]; twice {
			t.Fatalf("job %d placed twice", p.Job)
		}
		placed[p.Job] = p
		j, n := byID[p.Job], spec[p.Node]
		if !slices.Contains(n.Services, j.Type) {
			t.Errorf("job %d of type %s ran on %s, which does not offer it", p.Job, j.Type, p.Node)
		}
		if p.StartS < time.Duration(j.SubmitAt).Seconds()-1e-9 {
			t.Errorf("job %d started at %v before its submission at %s", p.Job, p.StartS, time.Duration(j.SubmitAt))
		}
	}
	// Each node's load and job count at every start.
	for _, p := range res.Placements {
		load, count, alone := 0.0, 0, true
		for _, q := range res.Placements {
			if q.Node != p.Node || q.StartS > p.StartS || (q.EndS != nil && *q.EndS <= p.StartS) {
				continue
			}
			load += *byID[q.Job].Load
			count++
			// Load-0 jobs take no capacity: an oversized job runs
			// "alone" beside them.
			alone = alone && (q.Job == p.Job || *byID[q.Job].Load == 0)
		}
		n := spec[p.Node]
		if load > n.MaxLoad+1e-9 && !alone {
			t.Errorf("node %s carried load %v (max %v) when job %d started", p.Node, load, n.MaxLoad, p.Job)
		}
		if count > n.MaxJobs {
			t.Errorf("node %s ran %d jobs (max %d) when job %d started", p.Node, count, n.MaxJobs, p.Job)
		}
	}
	// Keys: one at a time, in submission order.
	last := map[string]Placement{}
	for _, j := range jobs {
		p, ok := placed[j.ID]
		if j.Key == "" || !ok {
			continue
		}
		if prev, ok := last[j.Key]; ok && (prev.EndS == nil || *prev.EndS > p.StartS+1e-9) {
			t.Errorf("key %s: job %d started at %v while job %d ran", j.Key, j.ID, p.StartS, prev.Job)
		}
		last[j.Key] = p
	}
	// Every job a node could carry ran: jobs here all end, so nothing
	// runnable waits for ever.
	for _, j := range jobs {
		if _, ok := placed[j.ID]; ok || !anyNodeCanRun(nodes, j) || keyStuck(jobs, placed, j) {
			continue
		}
		t.Errorf("job %d (type %s, load %v) never ran though a node could run it", j.ID, j.Type, *j.Load)
	}
}

// anyNodeCanRun mirrors no placement rule: it asks only whether some node
// offering the type is big enough, or the largest of them takes oversized
// jobs — the plain facts the promise is about.
func anyNodeCanRun(nodes []NodeSpec, j JobSpec) bool {
	largest := 0.0
	for _, n := range nodes {
		if slices.Contains(n.Services, j.Type) {
			largest = max(largest, n.MaxLoad)
		}
	}
	for _, n := range nodes {
		if !slices.Contains(n.Services, j.Type) {
			continue
		}
		if *j.Load <= n.MaxLoad || (n.MaxLoad == largest && *n.AcceptExceeding) {
			return true
		}
	}
	return false
}

// keyStuck reports a job behind an earlier job of its key that never ran:
// it waits its turn for ever, as it should.
func keyStuck(jobs []JobSpec, placed map[int64]Placement, j JobSpec) bool {
	if j.Key == "" {
		return false
	}
	for _, o := range jobs {
		if o.Key == j.Key && o.ID < j.ID {
			if _, ok := placed[o.ID]; !ok {
				return true
			}
		}
	}
	return false
}

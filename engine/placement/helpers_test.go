package placement

import (
	"time"

	"github.com/jobctl/jobctl/engine"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// mk returns an ONLINE node offering "sleep", max load 4, 200 jobs, weight
// 100, accepting oversized jobs, changed by the options.
func mk(name string, opts ...func(*engine.Node)) *engine.Node {
	n := &engine.Node{
		Name: name, State: engine.NodeOnline, MaxLoad: 4, MaxJobs: 200, Weight: 100,
		AcceptExceeding: true, Services: []engine.NodeService{{Type: "sleep"}},
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func state(s engine.NodeState) func(*engine.Node) { return func(n *engine.Node) { n.State = s } }
func maxLoad(f float64) func(*engine.Node)        { return func(n *engine.Node) { n.MaxLoad = f } }
func load(f float64) func(*engine.Node)           { return func(n *engine.Node) { n.Load = f } }
func running(r int) func(*engine.Node)            { return func(n *engine.Node) { n.Running = r } }
func weight(w int) func(*engine.Node)             { return func(n *engine.Node) { n.Weight = w } }
func declinesOversized(n *engine.Node)            { n.AcceptExceeding = false }
func seen(t time.Time) func(*engine.Node)         { return func(n *engine.Node) { n.LastSeen = t } }
func lease(d time.Duration) func(*engine.Node) {
	return func(n *engine.Node) { n.Lease = engine.Duration(d) }
}

func types(ts ...string) func(*engine.Node) {
	return func(n *engine.Node) {
		n.Services = nil
		for _, t := range ts {
			n.Services = append(n.Services, engine.NodeService{Type: t})
		}
	}
}

func warm(startedAgo, warmup time.Duration) func(*engine.Node) {
	return func(n *engine.Node) {
		n.StartedAt = t0.Add(-startedAgo)
		n.Warmup = engine.Duration(warmup)
	}
}

func job(typ string, l float64) *engine.Job {
	return &engine.Job{ID: 1, Type: typ, Load: l, Status: engine.StatusQueued}
}

func names(nodes []*engine.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

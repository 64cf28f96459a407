package simulate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// simNode is one simulated `jobctl serve`: its acceptance books, the
// services it runs, and the figures the summary and the timeline need.
type simNode struct {
	spec     *NodeSpec
	books    *placement.Books
	services map[string]bool

	load        float64       // on the books now
	since       time.Duration // when load last changed
	loadSeconds float64       // load integrated over time
	steps       []Step        // load changes, when a timeline is asked for
}

func newSimNode(spec *NodeSpec) *simNode {
	n := &simNode{
		spec: spec,
		books: placement.NewBooks(placement.BookLimits{
			MaxLoad: spec.MaxLoad, MaxJobs: spec.MaxJobs, AcceptExceeding: *spec.AcceptExceeding,
		}),
		services: map[string]bool{},
	}
	for _, s := range spec.Services {
		n.services[s] = true
	}
	n.books.SetReady(true)
	return n
}

// row is the node as it registers in the store.
func (n *simNode) row() engine.Node {
	s := n.spec
	row := engine.Node{
		Name: s.Name, URL: "sim://" + s.Name, MaxLoad: s.MaxLoad, MaxJobs: s.MaxJobs, Weight: s.Weight,
		Warmup: engine.Duration(*s.Warmup), AcceptExceeding: *s.AcceptExceeding, Cores: s.Cores,
		ReservedMemory: int64(s.ReservedMemory),
	}
	switch {
	case s.MaxLoadAvg != nil:
		row.MaxLoadAvg = *s.MaxLoadAvg
	case s.Cores > 0:
		row.MaxLoadAvg = engine.DefaultMaxLoadAvg(s.Cores) // `jobctl serve`'s default
	}
	for _, t := range s.Services {
		row.Services = append(row.Services, engine.NodeService{Type: t})
	}
	return row
}

// changed brings the node's load figures up to time t after its books
// changed; record keeps the step for the timeline.
func (n *simNode) changed(t time.Duration, record bool) {
	n.settle(t)
	n.load, _ = n.books.Totals()
	if record {
		n.steps = append(n.steps, Step{At: t, Load: n.load})
	}
}

// settle integrates the load up to time t.
func (n *simNode) settle(t time.Duration) {
	n.loadSeconds += n.load * (t - n.since).Seconds()
	n.since = t
}

// Offer answers the dispatcher for a simulated node the way a node's
// endpoint does: a type it does not run is refused, the books decide
// whether the job fits now, and an accepted job is started at once with the
// engine's start transition, guarded by the version the offer carries.
func (s *sim) Offer(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult {
	node := s.nodes[n.Name]
	if node == nil {
		return engine.OfferResult{Verdict: engine.OfferError, Reason: "no such simulated node"}
	}
	if !node.services[o.Type] {
		return engine.OfferResult{Verdict: engine.OfferRefused, Reason: fmt.Sprintf("type %q not offered by node %s", o.Type, n.Name)}
	}
	if d := node.books.Take(o.JobID, o.Load, nil); !d.Accept {
		s.declines++
		return engine.OfferResult{Verdict: engine.OfferDeclined, Reason: d.Reason}
	}
	offered := &engine.Job{ID: o.JobID, Status: engine.StatusDispatching, Version: o.Version}
	run, err := s.store.JobUpdate(ctx, engine.StartUpdate(offered))
	if err != nil {
		node.books.Release(o.JobID)
		if errors.Is(err, engine.ErrConflict) || errors.Is(err, engine.ErrNotFound) {
			return engine.OfferResult{Verdict: engine.OfferGone, Reason: "job moved on"}
		}
		s.fail(err)
		return engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "not-ready: " + err.Error()}
	}
	s.started(node, run)
	return engine.OfferResult{Verdict: engine.OfferAccepted}
}

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

// OfferBatch answers the dispatcher for a simulated node the way a node's
// endpoint does: a type it does not run is refused, the books decide in
// turn whether each job fits now, and the jobs they took are started at
// once with the engine's start transition, in one store call, each guarded
// by the version its offer carries.
func (s *sim) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	out := make([]engine.OfferResult, len(offers))
	node := s.nodes[n.Name]
	if node == nil {
		for i := range out {
			out[i] = engine.OfferResult{Verdict: engine.OfferError, Reason: "no such simulated node"}
		}
		return out
	}
	// The room of the last call is reused: the store keeps neither slice.
	taken := s.takenBuf[:0] // indexes of the offers the books took
	us := s.updateBuf[:0]
	defer func() { s.takenBuf, s.updateBuf = taken, us }()
	for i, o := range offers {
		if !node.services[o.Type] {
			out[i] = engine.OfferResult{Verdict: engine.OfferRefused, Reason: fmt.Sprintf("type %q not offered by node %s", o.Type, n.Name)}
			continue
		}
		if d := node.books.Take(o.JobID, o.Load, nil); !d.Accept {
			s.declines++
			out[i] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: d.Reason}
			continue
		}
		taken = append(taken, i)
		us = append(us, engine.StartOfferUpdate(o, n.Name))
	}
	if len(us) == 0 {
		return out
	}
	results, err := s.store.JobUpdateMany(ctx, us)
	if err != nil {
		s.fail(err)
	}
	for k, i := range taken {
		jobErr := err // the whole call's, else this job's
		if jobErr == nil {
			jobErr = results[k].Err
		}
		switch {
		case jobErr == nil:
			s.started(node, results[k].Job)
			out[i] = engine.OfferResult{Verdict: engine.OfferAccepted}
			continue
		case errors.Is(jobErr, engine.ErrConflict):
			out[i] = engine.OfferResult{Verdict: engine.OfferGone, Reason: "job moved on"}
		default:
			if err == nil {
				s.fail(jobErr)
			}
			out[i] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "not-ready: " + jobErr.Error()}
		}
		node.books.Release(offers[i].JobID)
	}
	return out
}

// Offer is OfferBatch of one offer.
func (s *sim) Offer(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult {
	return s.OfferBatch(ctx, n, []engine.DispatchOffer{o})[0]
}

package placement

import (
	"fmt"

	"github.com/jobctl/jobctl/engine"
)

// FilterOptions are what the dispatcher knows about a job beyond the job row.
type FilterOptions struct {
	// FirstChild marks the first non-workflow child of a parent none of
	// whose children run yet: it may queue ahead, so it needs no headroom.
	FirstChild bool
	// Reserved maps a node to the oversized job it is kept for; every other
	// job skips that node, so it drains and the oversized job is not starved.
	Reserved map[string]int64
}

// Placement is the outcome of Filter for one job.
type Placement struct {
	// Eligible are the nodes that may take the job now, in input order;
	// a Selector orders them.
	Eligible []*engine.Node
	// Verdicts has one entry per input node, in input order.
	Verdicts []Verdict
	// Oversized is true when the job's load exceeds the max load of every
	// ONLINE node offering its type: only the largest of them are candidates,
	// and only while idle.
	Oversized bool
	// LargestMaxLoad is the highest max load among the ONLINE nodes that
	// offer the job's type; 0 when there are none.
	LargestMaxLoad float64
}

// NeverRunnable reports whether no node of the cluster as it is could ever
// take the job; see the function NeverRunnable.
func (p Placement) NeverRunnable() bool { return NeverRunnable(p.Verdicts) }

// Filter gives every node a verdict for job and returns the eligible ones
// (DESIGN.md §4.3). Nodes carry their live Load and Running.
//
// Checks run in this order, and a verdict names the first that fails, so
// permanent causes come before passing ones and NeverRunnable can trust
// them: ONLINE; offers the type; large enough (see below); not overloaded;
// not reserved for another job; headroom.
//
// Whether a job is oversized is judged against the ONLINE nodes offering its
// type, not only the healthy ones: a big node's passing load spike must not
// send a big job to run alone on a small node.
func Filter(job *engine.Job, nodes []*engine.Node, opts FilterOptions) Placement {
	var p Placement
	for _, n := range nodes {
		if n.State == engine.NodeOnline && n.Offers(job.Type) && n.MaxLoad > p.LargestMaxLoad {
			p.LargestMaxLoad = n.MaxLoad
		}
	}
	p.Oversized = p.LargestMaxLoad > 0 && exceedsMaxLoad(job.Load, p.LargestMaxLoad)
	p.Verdicts = make([]Verdict, 0, len(nodes))
	for _, n := range nodes {
		cause, reason := p.judge(job, n, opts)
		v := Verdict{Node: n.Name, Eligible: cause == CauseNone, Reason: reason, Cause: cause}
		if v.Eligible {
			p.Eligible = append(p.Eligible, n)
		}
		p.Verdicts = append(p.Verdicts, v)
	}
	return p
}

// judge is one node's verdict; the reason says why it is out, or on what
// terms it is in.
func (p *Placement) judge(job *engine.Job, n *engine.Node, opts FilterOptions) (Cause, string) {
	if n.State != engine.NodeOnline {
		return CauseState, stateReason(n.State)
	}
	if !n.Offers(job.Type) {
		return CauseType, fmt.Sprintf("does not offer type %q", job.Type)
	}
	if exceedsMaxLoad(job.Load, n.MaxLoad) {
		switch {
		case !p.Oversized:
			return CauseTooSmall, fmt.Sprintf("max load %s below job load %s", num(n.MaxLoad), num(job.Load))
		case n.MaxLoad < p.LargestMaxLoad:
			return CauseTooSmall, fmt.Sprintf("max load %s below job load %s; only the largest nodes (max load %s) take it",
				num(n.MaxLoad), num(job.Load), num(p.LargestMaxLoad))
		case !n.AcceptExceeding:
			return CauseDeclinesOversized, fmt.Sprintf("declines jobs above its max load %s (accept-exceeding is off)", num(n.MaxLoad))
		}
	}
	if cause, reason := healthCheck(n); cause != CauseNone {
		return cause, reason
	}
	if owner, ok := opts.Reserved[n.Name]; ok && owner != job.ID {
		return CauseReserved, fmt.Sprintf("reserved for oversized job %d", owner)
	}
	// An oversized job waits for an idle node even as a first child: it
	// must run alone, and queueing it ahead would only stall the node.
	if p.Oversized || !opts.FirstChild {
		if cause, reason := roomFor(n.Load, job.Load, n.MaxLoad, n.Running, n.MaxJobs); cause != CauseNone {
			return cause, reason
		}
	}
	switch {
	case p.Oversized:
		return CauseNone, fmt.Sprintf("idle: runs the oversized job (load %s above max %s) alone", num(job.Load), num(n.MaxLoad))
	case opts.FirstChild:
		return CauseNone, fmt.Sprintf("first child: may queue ahead (load %s, max %s)", num(n.Load), num(n.MaxLoad))
	}
	return CauseNone, fmt.Sprintf("has room: load %s + %s within max %s", num(n.Load), num(job.Load), num(n.MaxLoad))
}

package dispatch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// neverRunnable names the case of a job no node can ever run, and what
// would change that.
func neverRunnable(job *engine.Job, nodes []*engine.Node, p *placement.Placement) (never, hint string) {
	offering, online := 0, 0
	for _, n := range nodes {
		if n.Offers(job.Type) {
			offering++
			if n.State == engine.NodeOnline {
				online++
			}
		}
	}
	switch {
	case len(nodes) == 0:
		return "no node is registered", "start one with 'jobctl serve'"
	case offering == 0 && job.Type == engine.TypeExec:
		return "it is an exec job and no node runs exec jobs", "start a node with 'jobctl serve --exec'"
	case offering == 0:
		return fmt.Sprintf("no node offers type %q", job.Type),
			fmt.Sprintf("start a node with 'jobctl serve --service %s=COMMAND'", job.Type)
	case online == 0:
		return fmt.Sprintf("no ONLINE node offers type %q: every node offering it is offline, in maintenance or in error", job.Type),
			"bring one of them back, or take it out of maintenance with 'jobctl nodes maintenance NAME off'"
	case p.Oversized:
		return fmt.Sprintf("its load %s is above every node's max load (the largest is %s) and the largest nodes decline loads above their max",
				engine.FormatNumber(job.Load), engine.FormatNumber(p.LargestMaxLoad)),
			"start the largest nodes with --accept-exceeding, or submit the job with a smaller --load"
	}
	return "every node is out for good", ""
}

// conclude is the explanation's one line.
func conclude(e *Explanation) string {
	if e.NeverRunnable {
		return "no node can ever run this job: " + e.Never
	}
	if h := e.Hold; h.Kind == engine.HoldStatus && !h.Status.QueuedLike() && h.Status != engine.StatusPaused {
		return "not dispatched: " + e.HoldReason // on a node or ended: where it could go is beside the point
	}
	var s string
	switch ranked := e.ranked(); {
	case len(ranked) > 0:
		s = fmt.Sprintf("node %s would be offered it first", ranked[0])
		if len(ranked) > 1 {
			s += fmt.Sprintf(" (then %s)", strings.Join(ranked[1:], ", "))
		}
	case e.KeptNode != "":
		s = fmt.Sprintf("no node can take it now; node %s is kept for it and takes no other work until it has drained", e.KeptNode)
	default:
		s = "no node can take it now: " + e.outCauses()
		if e.NextKeep != "" {
			s += fmt.Sprintf("; the next round keeps node %s for it", e.NextKeep)
		}
	}
	if e.AtLimit {
		s = e.limitHeld(s)
	}
	switch {
	case e.AheadHigher == 1:
		s += "; 1 queued job of a higher priority goes first"
	case e.AheadHigher > 1:
		s += fmt.Sprintf("; %d queued jobs of a higher priority go first", e.AheadHigher)
	}
	if !e.Dispatchable {
		return "not dispatched: " + e.HoldReason + "; were it dispatchable, " + s
	}
	return s
}

// ranked are the eligible nodes in offer order.
func (e *Explanation) ranked() []string {
	var vs []NodeVerdict
	for _, v := range e.Nodes {
		if v.Rank > 0 {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b NodeVerdict) int { return cmp.Compare(a.Rank, b.Rank) })
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Node
	}
	return out
}

// outCauses counts the nodes by the cause that keeps them out, most first.
func (e *Explanation) outCauses() string {
	counts := map[placement.Cause]int{}
	var causes []placement.Cause
	for _, v := range e.Nodes {
		if v.Eligible {
			continue
		}
		if counts[v.Cause] == 0 {
			causes = append(causes, v.Cause)
		}
		counts[v.Cause]++
	}
	slices.SortStableFunc(causes, func(a, b placement.Cause) int { return cmp.Compare(counts[b], counts[a]) })
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%d %s", counts[c], c)
	}
	return strings.Join(parts, ", ")
}

// Feasibility is whether the cluster as it is could ever run a job, by the
// rules a dispatch round applies: what submit warns about.
type Feasibility struct {
	// Offered: some registered node offers the job's type.
	Offered bool
	// Never says why no node of the cluster can ever run the job, and Hint
	// what would change that; "" when some node can.
	Never, Hint string
	// Oversized: the job's load is above every ONLINE node's max load, so
	// it runs only alone on one of the largest nodes (LargestMaxLoad),
	// which is kept for it and takes no other work until then.
	Oversized      bool
	LargestMaxLoad float64
}

// Feasible judges whether the nodes could ever run job, whatever they run
// now: only their state, the types they offer, their max load and whether
// they take jobs above it count.
func Feasible(job *engine.Job, nodes []*engine.Node) Feasibility {
	p := placement.Filter(job, nodes, placement.FilterOptions{})
	f := Feasibility{Oversized: p.Oversized, LargestMaxLoad: p.LargestMaxLoad}
	f.Offered = slices.ContainsFunc(nodes, func(n *engine.Node) bool { return n.Offers(job.Type) })
	if p.NeverRunnable() {
		f.Never, f.Hint = neverRunnable(job, nodes, &p)
	}
	return f
}

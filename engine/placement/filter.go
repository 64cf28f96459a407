package placement

import (
	"strings"
	"time"

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
	// Now is the database clock, which a node's last-seen time is on: a
	// node silent for longer than its node lease has stopped its own runs
	// and would take no job, so it is kept out (CauseSilent). Zero judges
	// no node silent.
	Now time.Time
	// Verdicts asks for one Verdict per node, as `jobctl explain` shows
	// them. The dispatcher leaves it off: it needs only Eligible and the
	// counts of causes, and a round filters every queued job.
	Verdicts bool
}

// Placement is the outcome of Filter for one job.
type Placement struct {
	// Eligible are the nodes that may take the job now, in input order;
	// a Selector orders them.
	Eligible []*engine.Node
	// Verdicts has one entry per input node, in input order, when
	// FilterOptions.Verdicts asked for them.
	Verdicts []Verdict
	// Oversized is true when the job's load exceeds the max load of every
	// ONLINE node offering its type: only the largest of them are candidates,
	// and only while idle.
	Oversized bool
	// LargestMaxLoad is the highest max load among the ONLINE nodes that
	// offer the job's type; 0 when there are none.
	LargestMaxLoad float64
	// Spilled is true when the eligible nodes are all above their
	// load-average limit: no node under its limit could take the job, so
	// the gate gave way (see Filter).
	Spilled bool

	// out counts the nodes kept out, by the index of their cause.
	out [len(causeOrder)]int
	// spare are the nodes above their load-average limit that would take
	// the job otherwise, in input order.
	spare []*engine.Node
	// offers says, per input node, whether it offers the job's type.
	offers []bool
}

// Filter gives every node a verdict for job and returns the eligible ones.
// Nodes carry their live Load and Running.
//
// Checks run in this order, and a verdict names the first that fails, so
// permanent causes come before passing ones and NeverRunnable can trust
// them: ONLINE; offers the type; large enough (see below); heard from
// within its node lease; free memory above its reserve; not kept for
// another job; headroom; load average within its limit.
//
// The load-average limit shifts work, it never stops it: a node above it
// is eligible only when no node under its limit is (Spilled), so a lone
// node on a busy machine still runs its jobs, while in a cluster the work
// goes to the calmer nodes as long as they have room. A load average says
// the machine is slow, not that a job would harm it; a memory reserve may
// (the kernel's OOM killer), so that gate holds.
//
// Whether a job is oversized is judged against the ONLINE nodes offering its
// type, not only the healthy ones: a big node's passing load spike must not
// send a big job to run alone on a small node.
func Filter(job *engine.Job, nodes []*engine.Node, opts FilterOptions) Placement {
	var p Placement
	FilterInto(&p, job, nodes, opts)
	return p
}

// FilterInto is Filter writing into p, reusing its slices: a dispatch round
// keeps one Placement for all its jobs, so filtering allocates nothing per
// job. What p held before is overwritten.
func FilterInto(p *Placement, job *engine.Job, nodes []*engine.Node, opts FilterOptions) {
	p.Eligible, p.Verdicts = p.Eligible[:0], p.Verdicts[:0]
	p.out = [len(causeOrder)]int{}
	p.LargestMaxLoad, p.Spilled, p.spare = 0, false, p.spare[:0]
	// Whether each node offers the type is looked up once, for both passes.
	p.offers = p.offers[:0]
	for _, n := range nodes {
		offers := n.Offers(job.Type)
		p.offers = append(p.offers, offers)
		if n.State == engine.NodeOnline && n.MaxLoad > p.LargestMaxLoad && offers {
			p.LargestMaxLoad = n.MaxLoad
		}
	}
	p.Oversized = p.LargestMaxLoad > 0 && exceedsMaxLoad(job.Load, p.LargestMaxLoad)
	for i, n := range nodes {
		cause, terms, overload := p.judge(job, n, p.offers[i], opts)
		p.out[cause.index()]++
		switch cause {
		case CauseNone:
			p.Eligible = append(p.Eligible, n)
		case CauseOverloaded:
			p.spare = append(p.spare, n)
		}
		if !opts.Verdicts {
			continue
		}
		v := Verdict{
			Node: n.Name, Eligible: cause == CauseNone, Cause: cause,
			State: n.State, Load: n.Load, MaxLoad: n.MaxLoad, Running: n.Running, MaxJobs: n.MaxJobs,
			Overload: overload.Reason, JobType: job.Type, JobLoad: job.Load,
			LargestMaxLoad: p.LargestMaxLoad, Oversized: p.Oversized,
		}
		if cause == CauseNone {
			v.Terms = terms
		} else {
			v.spillTerms = terms
		}
		if owner, ok := opts.Reserved[n.Name]; ok {
			v.KeptFor = owner
		}
		if cause == CauseSilent {
			v.Silent, v.NodeLease = engine.Duration(opts.Now.Sub(n.LastSeen)), engine.Duration(n.LeaseOf())
		}
		p.Verdicts = append(p.Verdicts, v)
	}
	if len(p.Eligible) == 0 && len(p.spare) > 0 {
		p.spill()
	}
}

// spill makes the nodes kept out only by their load average eligible: no
// node under its limit can take the job.
func (p *Placement) spill() {
	p.Spilled = true
	p.Eligible = append(p.Eligible, p.spare...)
	p.out[CauseOverloaded.index()] -= len(p.spare)
	p.out[CauseNone.index()] += len(p.spare)
	for i := range p.Verdicts {
		if v := &p.Verdicts[i]; v.Cause == CauseOverloaded {
			v.Eligible, v.Cause, v.Terms = true, CauseNone, v.spillTerms
		}
	}
}

// permanent is the part of a verdict that only the cluster changing can
// lift: state, type and size.
func (p *Placement) permanent(job *engine.Job, n *engine.Node) Cause {
	return p.permanentOf(job, n, n.Offers(job.Type))
}

// permanentOf is permanent with whether n offers job's type known.
func (p *Placement) permanentOf(job *engine.Job, n *engine.Node, offers bool) Cause {
	if n.State != engine.NodeOnline {
		return CauseState
	}
	if !offers {
		return CauseType
	}
	if exceedsMaxLoad(job.Load, n.MaxLoad) {
		switch {
		case !p.Oversized, n.MaxLoad < p.LargestMaxLoad:
			return CauseTooSmall
		case !n.AcceptExceeding:
			return CauseDeclinesOversized
		}
	}
	return CauseNone
}

// judge is one node's verdict: why it is out, or on what terms it is in,
// and the node's overload figures when its machine's health is what keeps
// it out. CauseOverloaded comes with the terms the node would take the job
// on, as only that cause may give way (spill).
func (p *Placement) judge(job *engine.Job, n *engine.Node, offers bool, opts FilterOptions) (Cause, Terms, engine.Overload) {
	if c := p.permanentOf(job, n, offers); c != CauseNone {
		return c, "", engine.Overload{}
	}
	if silent(n, opts.Now) {
		return CauseSilent, "", engine.Overload{}
	}
	o := n.Overloaded()
	if o.Kind == engine.OverloadLowMemory {
		return CauseLowMemory, "", o
	}
	if owner, ok := opts.Reserved[n.Name]; ok && owner != job.ID {
		return CauseReserved, "", engine.Overload{}
	}
	// An oversized job waits for an idle node even as a first child: it
	// must run alone, and queueing it ahead would only stall the node.
	if p.Oversized || !opts.FirstChild {
		if c := roomCause(n.Load, job.Load, n.MaxLoad, n.Running, n.MaxJobs); c != CauseNone {
			return c, "", engine.Overload{}
		}
	}
	terms := TermsRoom
	switch {
	case p.Oversized:
		terms = TermsAlone
	case opts.FirstChild:
		terms = TermsFirstChild
	}
	if o.Kind == engine.OverloadLoadAvg {
		return CauseOverloaded, terms, o
	}
	return CauseNone, terms, engine.Overload{}
}

// silent reports whether n has not been heard from for longer than its
// node lease at now; a zero now judges no node silent. A node seen at now
// or later is not, whatever its lease: the common case, which costs no
// subtraction of times.
func silent(n *engine.Node, now time.Time) bool {
	if now.IsZero() || !now.After(n.LastSeen) {
		return false
	}
	return now.Sub(n.LastSeen) > n.LeaseOf()
}

// NeverRunnable reports whether no node of the cluster as it is could ever
// take the job: no node is eligible and every node is out for a permanent
// cause. An empty cluster never runs anything.
func (p *Placement) NeverRunnable() bool {
	if len(p.Eligible) > 0 {
		return false
	}
	for i, c := range causeOrder {
		if p.out[i] > 0 && !c.Permanent() {
			return false
		}
	}
	return true
}

// WaitCause is why a job no node may take now waits: among the causes that
// will pass (permanent ones are not why it waits: some other node will do),
// the one that kept the most nodes out, a tie going to the cause checked
// last, the nearest to letting the node in. CauseNone when a node is
// eligible or the job can never run.
func (p *Placement) WaitCause() Cause {
	if len(p.Eligible) > 0 {
		return CauseNone
	}
	best, most := CauseNone, 0
	for i, c := range causeOrder {
		if c != CauseNone && !c.Permanent() && p.out[i] > 0 && p.out[i] >= most {
			best, most = c, p.out[i]
		}
	}
	return best
}

// Keep returns the node to keep free for job while no node takes it now,
// or nil when it keeps none. p must be job's Placement on nodes.
//
// Only an oversized job that some node could run keeps a node (a never
// runnable one would hold it forever): one of the largest ONLINE nodes
// offering its type with accept-exceeding on, which are exactly the nodes no
// permanent cause keeps out. The node kept for it already stays kept, so its
// draining is not lost; else the least loaded, then by name, skipping nodes
// kept for another job.
func (p *Placement) Keep(job *engine.Job, nodes []*engine.Node, reserved map[string]int64) *engine.Node {
	if !p.Oversized || p.NeverRunnable() {
		return nil
	}
	var best *engine.Node
	for _, n := range nodes {
		if p.permanent(job, n) != CauseNone {
			continue
		}
		owner, kept := reserved[n.Name]
		if kept && owner == job.ID {
			return n
		}
		if kept {
			continue
		}
		if best == nil || n.Load < best.Load || (n.Load == best.Load && strings.Compare(n.Name, best.Name) < 0) {
			best = n
		}
	}
	return best
}

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
	NewNodes(nodes).FilterInto(&p, job, opts)
	return p
}

// Nodes are the nodes a run of jobs is filtered against, with what holds
// for every job judged once: a dispatch round filters each job it places
// against the same nodes, of which only the Load and Running it books
// change. Whether each node is ONLINE, heard from, short of memory or
// above its load-average limit is judged at the first FilterOptions.Now
// filtered at (and again at another); which nodes offer a type, and their
// largest max load, for the first job of the type. Load and Running are
// read for each job; the nodes' other fields must not change while a
// Nodes is in use.
type Nodes struct {
	list []*engine.Node
	// health is, per node, what its state and its machine say, judged at
	// now (judged: for some now); overloads are the figures of the nodes
	// over a limit, nil when none is.
	health    []Cause
	overloads []engine.Overload
	now       time.Time
	judged    bool
	// offered is, per job type, which nodes offer it.
	offered map[string]*offered
}

// offered is which nodes offer one job type.
type offered struct {
	offers []bool // per node, in input order
	// largest is the highest max load among the ONLINE nodes offering it
	// (Placement.LargestMaxLoad).
	largest float64
}

// NewNodes readies nodes for filtering jobs against them.
func NewNodes(nodes []*engine.Node) *Nodes {
	return &Nodes{list: nodes, offered: map[string]*offered{}}
}

// judge judges every node's health at now, unless it is judged at now: a
// node's health is the cause that keeps it out of any job whatever its
// type and load, CauseState, CauseSilent or CauseLowMemory, else
// CauseOverloaded when it is above its load-average limit (the cause
// checked last), else CauseNone.
func (ns *Nodes) judge(now time.Time) {
	if ns.judged && ns.now.Equal(now) {
		return
	}
	ns.judged, ns.now = true, now
	ns.health, ns.overloads = make([]Cause, len(ns.list)), nil
	for i, n := range ns.list {
		if n.State != engine.NodeOnline {
			ns.health[i] = CauseState
			continue
		}
		if silent(n, now) {
			ns.health[i] = CauseSilent
			continue
		}
		o := n.Overloaded()
		switch o.Kind {
		case engine.OverloadLowMemory:
			ns.health[i] = CauseLowMemory
		case engine.OverloadLoadAvg:
			ns.health[i] = CauseOverloaded
		default:
			continue
		}
		if ns.overloads == nil {
			ns.overloads = make([]engine.Overload, len(ns.list))
		}
		ns.overloads[i] = o
	}
}

// overload is node i's figures when it is over a limit.
func (ns *Nodes) overload(i int) engine.Overload {
	if ns.overloads == nil {
		return engine.Overload{}
	}
	return ns.overloads[i]
}

// offering is which nodes offer typ.
func (ns *Nodes) offering(typ string) *offered {
	if o := ns.offered[typ]; o != nil {
		return o
	}
	o := &offered{offers: make([]bool, len(ns.list))}
	for i, n := range ns.list {
		o.offers[i] = n.Offers(typ)
		if n.State == engine.NodeOnline && n.MaxLoad > o.largest && o.offers[i] {
			o.largest = n.MaxLoad
		}
	}
	ns.offered[typ] = o
	return o
}

// FilterInto is Filter against ns writing into p, reusing its slices: a
// dispatch round keeps one Placement for all its jobs, so filtering
// allocates nothing per job. What p held before is overwritten.
func (ns *Nodes) FilterInto(p *Placement, job *engine.Job, opts FilterOptions) {
	ns.judge(opts.Now)
	p.Eligible, p.Verdicts = p.Eligible[:0], p.Verdicts[:0]
	p.out = [len(causeOrder)]int{}
	p.Spilled, p.spare = false, p.spare[:0]
	o := ns.offering(job.Type)
	p.LargestMaxLoad = o.largest
	p.Oversized = p.LargestMaxLoad > 0 && exceedsMaxLoad(job.Load, p.LargestMaxLoad)
	for i, n := range ns.list {
		cause, terms := p.judge(job, n, o.offers[i], ns.health[i], opts)
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
			JobType: job.Type, JobLoad: job.Load,
			LargestMaxLoad: p.LargestMaxLoad, Oversized: p.Oversized,
		}
		if cause == CauseNone {
			v.Terms = terms
		} else {
			v.spillTerms = terms
		}
		if cause == CauseLowMemory || cause == CauseOverloaded {
			v.Overload = ns.overload(i).Reason
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
	return p.permanentOf(job, n, n.State == engine.NodeOnline, n.Offers(job.Type))
}

// permanentOf is permanent with whether n is ONLINE and offers job's type
// known.
func (p *Placement) permanentOf(job *engine.Job, n *engine.Node, online, offers bool) Cause {
	if !online {
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

// judge is one node's verdict: why it is out, or on what terms it is in.
// health is the node's (Nodes.judge). CauseOverloaded comes with the terms
// the node would take the job on, as only that cause may give way (spill).
func (p *Placement) judge(job *engine.Job, n *engine.Node, offers bool, health Cause, opts FilterOptions) (Cause, Terms) {
	if c := p.permanentOf(job, n, health != CauseState, offers); c != CauseNone {
		return c, ""
	}
	if health == CauseSilent || health == CauseLowMemory {
		return health, ""
	}
	if owner, ok := opts.Reserved[n.Name]; ok && owner != job.ID {
		return CauseReserved, ""
	}
	// An oversized job waits for an idle node even as a first child: it
	// must run alone, and queueing it ahead would only stall the node.
	if p.Oversized || !opts.FirstChild {
		if c := roomCause(n.Load, job.Load, n.MaxLoad, n.Running, n.MaxJobs); c != CauseNone {
			return c, ""
		}
	}
	terms := TermsRoom
	switch {
	case p.Oversized:
		terms = TermsAlone
	case opts.FirstChild:
		terms = TermsFirstChild
	}
	return health, terms
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

package dispatch

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// Explanation is why a job runs where it does or waits, as `jobctl
// explain` shows it. It is computed by the code a dispatch round runs, on
// the cluster as the store holds it now.
type Explanation struct {
	Job *engine.Job `json:"job"`
	// Now is the database's clock the explanation was judged at.
	Now time.Time `json:"now"`
	// Hold is what keeps the job from being dispatched before any node is
	// looked at; Hold.Kind is "" when it is dispatchable now.
	Hold         engine.Hold `json:"hold"`
	Dispatchable bool        `json:"dispatchable"`
	HoldReason   string      `json:"hold_reason"`
	// ParentRule says how the job's parent changes its candidates; "" for
	// a root job.
	ParentRule string `json:"parent_rule,omitempty"`
	FirstChild bool   `json:"first_child"`
	// Oversized: the job's load exceeds every ONLINE node offering its
	// type; only the largest of them, idle, can run it.
	Oversized      bool    `json:"oversized"`
	LargestMaxLoad float64 `json:"largest_max_load"`
	// KeptNode is the node kept free for this job; NextKeep the node the
	// next round would keep for it when it has none yet.
	KeptNode string `json:"kept_node,omitempty"`
	NextKeep string `json:"next_keep,omitempty"`
	Selector string `json:"selector"`
	// TypeLimit is the cluster-wide limit of the job's type, with the
	// jobs of the type running now; nil when the type has none. AtLimit:
	// as many run as it allows, so the job is held back whatever the
	// nodes say.
	TypeLimit *engine.TypeLimit `json:"type_limit,omitempty"`
	AtLimit   bool              `json:"at_limit"`
	// AheadHigher counts the queued jobs (QUEUED or RESTART) of a higher
	// priority than a queued job's: a node's room goes to them first.
	AheadHigher int `json:"ahead_higher_priority"`
	// Nodes has every node's verdict, in the order the store lists them.
	Nodes []NodeVerdict `json:"nodes"`
	// NeverRunnable: no node of the cluster as it is can ever run the job;
	// Never says which case, in words, and Hint what would change it.
	NeverRunnable bool   `json:"never_runnable"`
	Never         string `json:"never,omitempty"`
	Hint          string `json:"hint,omitempty"`
	// Conclusion is the one line that sums it all up.
	Conclusion string `json:"conclusion"`
	// LoadCheck is what the latest measured runs of the job's type used
	// beside the load they declared (see engine.JudgeLoad); nil when the
	// type has no measured run. Its Note is set when the declared load is
	// far from the use: the dispatcher places by a load that is not true.
	LoadCheck *engine.TypeUsage `json:"load_check"`
}

// NodeVerdict is one node's verdict for the job and its place in the
// selector's order.
type NodeVerdict struct {
	Node     string           `json:"node"`
	State    engine.NodeState `json:"state"`
	Eligible bool             `json:"eligible"`
	// Rank is the node's place in the order the job would be offered to
	// the eligible nodes, from 1; 0 for a node that is out.
	Rank     int             `json:"rank"`
	Cause    placement.Cause `json:"cause"`
	Reason   string          `json:"reason"`
	Load     float64         `json:"load"`
	MaxLoad  float64         `json:"max_load"`
	Running  int             `json:"running"`
	MaxJobs  int             `json:"max_jobs"`
	KeptFor  int64           `json:"kept_for,omitempty"`
	Overload string          `json:"overload,omitempty"`
}

// Explain judges job jobID against the cluster as the store has it now:
// whether it is dispatchable, every node's verdict, the rank selector
// gives the eligible ones, and, plainly, when no node can ever run it. It
// changes nothing; a reservation the next round would drop is ignored, as
// that round would. selector is only asked for an order, so pass a fresh
// one (placement.ParseSelector) rather than a running dispatcher's.
func Explain(ctx context.Context, store ExplainStore, jobID int64, selector placement.Selector) (*Explanation, error) {
	job, err := store.JobGet(ctx, jobID)
	if err != nil {
		return nil, err
	}
	now, err := store.Now(ctx)
	if err != nil {
		return nil, err
	}
	hold, err := jobHold(ctx, store, job, now)
	if err != nil {
		return nil, err
	}
	if err := countChildren(ctx, store, job, &hold); err != nil {
		return nil, err
	}
	c, _, _, err := loadCluster(ctx, store)
	if err != nil {
		return nil, err
	}
	c.now = now
	limit, err := engine.TypeLimitOf(ctx, store, job.Type)
	if err != nil {
		return nil, err
	}
	if err := c.learnSiblings(ctx, job); err != nil {
		return nil, err
	}
	ahead, err := aheadHigher(ctx, store, job)
	if err != nil {
		return nil, err
	}
	var p placement.Placement
	first := c.candidates(&p, job, true)
	e := &Explanation{
		Job: job, Now: now, Hold: hold, Dispatchable: hold.Dispatchable(), HoldReason: hold.Reason(now),
		FirstChild: first, ParentRule: parentRule(job, first),
		Oversized: p.Oversized, LargestMaxLoad: p.LargestMaxLoad, KeptNode: c.keptBy[job.ID],
		Selector: selector.Name(), NeverRunnable: p.NeverRunnable(),
		TypeLimit: limit, AtLimit: limit != nil && limit.Running >= limit.MaxRunning, AheadHigher: ahead,
	}
	if e.KeptNode == "" && len(p.Eligible) == 0 {
		if n := p.Keep(job, c.nodes, c.heldFor); n != nil {
			e.NextKeep = n.Name
		}
	}
	rank := map[string]int{}
	for i, n := range selector.Order(job, p.Eligible, now) {
		rank[n.Name] = i + 1
	}
	for _, v := range p.Verdicts {
		e.Nodes = append(e.Nodes, NodeVerdict{
			Node: v.Node, State: v.State, Eligible: v.Eligible, Rank: rank[v.Node], Cause: v.Cause, Reason: v.Reason(),
			Load: v.Load, MaxLoad: v.MaxLoad, Running: v.Running, MaxJobs: v.MaxJobs, KeptFor: v.KeptFor, Overload: v.Overload,
		})
	}
	if e.NeverRunnable {
		e.Never, e.Hint = neverRunnable(job, c.nodes, &p)
	}
	e.Conclusion = conclude(e)
	attempts, err := store.JobAttemptUsageList(ctx, engine.JobAttemptUsageParams{Types: []string{job.Type}, Runs: engine.DefaultUsageRuns})
	if err != nil {
		return nil, err
	}
	if usage := engine.SummarizeUsage(attempts); len(usage) == 1 {
		e.LoadCheck = &usage[0]
	}
	return e, nil
}

// aheadHigher counts the queued jobs of a higher priority than job's, when
// job is queued itself.
func aheadHigher(ctx context.Context, store ExplainStore, job *engine.Job) (int, error) {
	if !job.Status.QueuedLike() || job.Priority >= engine.MaxPriority {
		return 0, nil
	}
	counts, err := store.JobCountByStatus(ctx, engine.JobListParams{Statuses: engine.DispatchableStatuses,
		PriorityMin: job.Priority + 1})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n, nil
}

// countChildren fills in the children a WAITING job waits for.
func countChildren(ctx context.Context, store ExplainStore, job *engine.Job, hold *engine.Hold) error {
	if job.Status != engine.StatusWaiting {
		return nil
	}
	children, err := store.JobList(ctx, engine.JobListParams{ParentID: &job.ID, Brief: true})
	if err != nil {
		return err
	}
	hold.Children = len(children)
	for _, c := range children {
		if c.Status.Terminal() {
			hold.ChildrenEnded++
		}
	}
	return nil
}

// parentRule says how a job's parent changes where it may run.
func parentRule(job *engine.Job, first bool) string {
	switch {
	case job.Type == engine.TypeWorkflow:
		return "workflow step: placed after every other job of a round, only on a node with room now"
	case job.ParentID == nil:
		return ""
	case first:
		return "first child of a parent whose children do not run yet: it may queue ahead on a node without room"
	}
	return "a sibling already runs: it needs room now, like a root job"
}

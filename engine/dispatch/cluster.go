package dispatch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// cluster is what a job is placed against: the nodes with their live load,
// the nodes kept for oversized jobs, and what is known of each parent's
// children. A round and Explain compute a job's candidates through the same
// cluster methods, so an explanation is what the round does.
type cluster struct {
	store ClusterReader
	nodes []*engine.Node
	// judged are the nodes as every job of a round is filtered against
	// them: what holds for the whole round is judged once.
	judged *placement.Nodes
	// heldFor maps each kept node to the oversized job it is kept for;
	// keptBy is the same the other way round.
	heldFor map[string]int64
	keptBy  map[int64]string
	// siblingsRunning caches, per parent, whether any child already runs.
	siblingsRunning map[int64]bool
	// now is the database clock nodes' silence is judged by: for a round,
	// the latest last-seen time of the nodes read, which every live node
	// moves on at a fifth of its node lease (the lease holder's own among
	// them), so a round needs no read of the clock for it; Explain sets the
	// clock itself.
	now time.Time
}

// loadCluster reads the nodes and the reservations that still stand (see
// liveReservations); stale lists the jobs whose reservation has lapsed.
func loadCluster(ctx context.Context, store ClusterReader) (c *cluster, kept []*engine.Job, stale []int64, err error) {
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	c = &cluster{store: store, nodes: nodes, judged: placement.NewNodes(nodes), heldFor: map[string]int64{}, keptBy: map[int64]string{}, siblingsRunning: map[int64]bool{}}
	for _, n := range nodes {
		if n.LastSeen.After(c.now) {
			c.now = n.LastSeen
		}
	}
	kept, stale, err = c.liveReservations(ctx)
	return c, kept, stale, err
}

// liveReservations reads the reservations and keeps those whose job is
// still dispatchable (engine.DispatchHold: not placed, cancelled, paused,
// delayed or blocked by its key) and whose node is still registered; the
// others are stale. Whether a kept job has become never runnable, or its
// node no longer fits it, is judged when the job is placed (Placement.Keep).
func (c *cluster) liveReservations(ctx context.Context) (kept []*engine.Job, stale []int64, err error) {
	list, err := c.store.ReservationList(ctx)
	if err != nil || len(list) == 0 {
		return nil, nil, err
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, res := range list {
		job, err := c.store.JobGet(ctx, res.JobID)
		if errors.Is(err, engine.ErrNotFound) {
			stale = append(stale, res.JobID)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		hold, err := jobHold(ctx, c.store, job, now)
		if err != nil {
			return nil, nil, err
		}
		if !hold.Dispatchable() || c.node(res.Node) == nil {
			stale = append(stale, res.JobID)
			continue
		}
		c.heldFor[res.Node], c.keptBy[job.ID] = job.ID, res.Node
		kept = append(kept, job)
	}
	return kept, stale, nil
}

// jobHold is engine.DispatchHold with the jobs of job's key read from store.
func jobHold(ctx context.Context, store ClusterReader, job *engine.Job, now time.Time) (engine.Hold, error) {
	var keyJobs []*engine.Job
	if job.Key != "" && job.Status.Dispatchable() {
		var err error
		if keyJobs, err = store.JobList(ctx, engine.JobListParams{Key: job.Key}); err != nil {
			return engine.Hold{}, err
		}
	}
	return engine.DispatchHold(job, now, keyJobs), nil
}

func (c *cluster) node(name string) *engine.Node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// learnSiblings reads whether any child of job's parent holds load on a
// node, unless that is known already (a round learns it for a whole slice
// at once).
func (c *cluster) learnSiblings(ctx context.Context, job *engine.Job) error {
	if job.ParentID == nil {
		return nil
	}
	if _, ok := c.siblingsRunning[*job.ParentID]; ok {
		return nil
	}
	sibs, err := c.store.JobList(ctx, engine.JobListParams{ParentID: job.ParentID, Statuses: engine.LoadHoldingStatuses, Brief: true})
	if err != nil {
		return err
	}
	c.siblingsRunning[*job.ParentID] = slices.ContainsFunc(sibs, (*engine.Job).HoldsLoad)
	return nil
}

// firstChild reports whether job is the first non-workflow child of a parent
// none of whose children run yet; such a job may queue ahead on any node.
// What is known of the parent's children was learned before.
func (c *cluster) firstChild(job *engine.Job) bool {
	if job.ParentID == nil || job.Type == engine.TypeWorkflow {
		return false
	}
	return !c.siblingsRunning[*job.ParentID]
}

// candidates fills p with job's placement; verdicts asks for one verdict
// per node. It reports whether the job was judged as a first child.
func (c *cluster) candidates(p *placement.Placement, job *engine.Job, verdicts bool) bool {
	first := c.firstChild(job)
	c.judged.FilterInto(p, job, placement.FilterOptions{FirstChild: first, Reserved: c.heldFor, Now: c.now, Verdicts: verdicts})
	return first
}

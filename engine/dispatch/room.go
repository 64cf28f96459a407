package dispatch

import (
	"math"

	"github.com/jobctl/jobctl/engine"
)

// loadSlack matches placement's tolerance for float rounding, so the rule
// below never skips a job that placement would fit exactly.
const loadSlack = 1e-9

// room is what a round knows of the capacity left, so that once the cluster
// is full it counts the rest of the queue as waiting for room without
// filtering every node for every job.
//
// A job is counted so, as Waiting["busy"] and Skipped, only when all of
// these hold, and then filtering would find no node for it either:
//
//  1. it cannot be a first child (it has no parent, or a sibling is known to
//     run this round): a first child needs no headroom;
//  2. some ONLINE node offering its type has a max load of at least the
//     job's load: the job is not oversized (an oversized job waits for an
//     idle node and must keep one) and not one no node offers (which is
//     reported never runnable instead);
//  3. no ONLINE node is short of memory (see room.overloaded);
//  4. its load is above the most free load of any open node: ONLINE, not
//     short of memory, under its max jobs and not kept for an oversized
//     job. A node above its load-average limit is open: the gate only
//     shifts work to calmer nodes, so when none of them has room it takes
//     the job (placement.Filter).
//     Every other node fails an earlier check of Filter. A job that would
//     fit a kept node is filtered all the same, so it is counted as waiting
//     for that node ("reserved") rather than for room.
type room struct {
	nodes   []*engine.Node
	healthy []bool // per node: ONLINE and not short of memory, fixed for the round
	// free is the most free load of an open node, -Inf when none is open;
	// stale when dirty.
	free float64
	// keptFree is the same over the healthy nodes kept for oversized jobs.
	keptFree float64
	dirty    bool
	// overloaded: some ONLINE node is short of memory. Then the rule is
	// off, so every waiting job is filtered and counted with the cause that
	// really holds it back, naming those nodes: a node held back by its
	// health must never pass for a full cluster.
	overloaded bool
	// largest caches per job type the largest max load of the ONLINE nodes
	// offering it (0: none).
	largest map[string]float64
}

func (rm *room) reset(nodes []*engine.Node) {
	rm.nodes, rm.dirty, rm.largest = nodes, true, map[string]float64{}
	rm.healthy = make([]bool, len(nodes))
	rm.overloaded = false
	for i, n := range nodes {
		online := n.State == engine.NodeOnline
		rm.healthy[i] = online && n.Overloaded().Kind != engine.OverloadLowMemory
		rm.overloaded = rm.overloaded || (online && !rm.healthy[i])
	}
}

// changed marks the free capacity stale: a job was placed or a node kept.
func (rm *room) changed() { rm.dirty = true }

// full reports whether job may be counted without filtering (rules above).
func (r *round) full(job *engine.Job) bool {
	rm := &r.room
	if rm.overloaded || (job.ParentID != nil && !r.siblingsRunning[*job.ParentID]) {
		return false
	}
	largest, ok := rm.largest[job.Type]
	if !ok {
		for _, n := range rm.nodes {
			if n.State == engine.NodeOnline && n.MaxLoad > largest && n.Offers(job.Type) {
				largest = n.MaxLoad
			}
		}
		rm.largest[job.Type] = largest
	}
	if largest <= 0 || job.Load > largest+loadSlack {
		return false
	}
	if rm.dirty {
		rm.free, rm.keptFree = math.Inf(-1), math.Inf(-1)
		for i, n := range rm.nodes {
			if !rm.healthy[i] || (n.MaxJobs > 0 && n.Running >= n.MaxJobs) {
				continue
			}
			if _, kept := r.heldFor[n.Name]; kept {
				rm.keptFree = max(rm.keptFree, n.MaxLoad-n.Load)
			} else {
				rm.free = max(rm.free, n.MaxLoad-n.Load)
			}
		}
		rm.dirty = false
	}
	return job.Load > rm.free+loadSlack && job.Load > rm.keptFree+loadSlack
}

// noRoom reports whether no node the round may still offer to has room
// for more work: every healthy node not kept for an oversized job is at its
// max jobs or has no load left, or declined or did not answer. The round
// then stops reading the queue. A job of load 0, or a first child, could
// still be placed on such a node, but it waits its turn in the queue like
// any other: room frees as jobs end.
func (r *round) noRoom() bool {
	for i, n := range r.nodes {
		if !r.room.healthy[i] || r.closed[n.Name] || r.unreachable[n.Name] {
			continue
		}
		if _, kept := r.heldFor[n.Name]; kept {
			continue
		}
		if (n.MaxJobs <= 0 || n.Running < n.MaxJobs) && n.MaxLoad-n.Load > loadSlack {
			return false
		}
	}
	return true
}

package dispatch

import (
	"math"

	"github.com/jobctl/jobctl/engine"
)

// loadSlack matches placement's tolerance for float rounding, so a page
// never leaves out a job that placement would fit exactly.
const loadSlack = 1e-9

// typeRoom is the room the open nodes offering one job type have left, as
// a round has booked them so far: what bounds which of the type's jobs a
// page reads, and how many.
type typeRoom struct {
	// free is the most free load of one such node; -Inf when none is open.
	free float64
	// slots is how many more jobs they take, by their max jobs and by how
	// many of the lightest job's load fit each one's free load.
	slots int
	// nodes counts them.
	nodes int
}

// openAt reports whether the round may still offer node i work that needs
// room: healthy (ONLINE, not short of memory, heard from within its node
// lease), not declined or unreachable this round, and not kept for an
// oversized job.
func (r *round) openAt(i int) bool {
	n := r.nodes[i]
	if !r.healthy[i] || r.closed[n.Name] || r.unreachable[n.Name] {
		return false
	}
	_, kept := r.heldFor[n.Name]
	return !kept
}

// roomFor is the room the open nodes offering typ have left now, for jobs
// of the type none lighter than lightest.
func (r *round) roomFor(typ string, lightest float64) typeRoom {
	room := typeRoom{free: math.Inf(-1)}
	for i, n := range r.nodes {
		if !r.openAt(i) || !n.Offers(typ) {
			continue
		}
		slots := r.pageSize
		if n.MaxJobs > 0 {
			slots = n.MaxJobs - n.Running
		}
		if slots <= 0 {
			continue
		}
		free := n.MaxLoad - n.Load
		if lightest > 0 {
			slots = min(slots, max(int((free+loadSlack)/lightest), 0))
		}
		room.slots += slots
		room.nodes++
		room.free = max(room.free, free)
	}
	return room
}

// largestMaxLoad is the largest max load of the ONLINE nodes offering typ,
// as placement judges a job oversized by (0: none offers it), and how many
// of those largest nodes take jobs above their max load: the most
// oversized jobs of the type a round can place or keep a node for.
func (r *round) largestMaxLoad(typ string) (largest float64, takers int) {
	for _, n := range r.nodes {
		if n.State != engine.NodeOnline || !n.Offers(typ) {
			continue
		}
		switch {
		case n.MaxLoad > largest+loadSlack:
			largest, takers = n.MaxLoad, 0
			if n.AcceptExceeding {
				takers = 1
			}
		case n.MaxLoad >= largest-loadSlack && n.AcceptExceeding:
			takers++
		}
	}
	return largest, takers
}

// judgeHealth records, once a round, which nodes are healthy (see openAt),
// and which ONLINE nodes their own machine holds back, for the summary. A
// node above its load-average limit counts as healthy here: the gate only
// shifts work to calmer nodes, and takes the job itself when none of them
// has room (placement.Filter), so its room is room a page may fill. A node
// short of memory takes nothing.
func (r *round) judgeHealth() {
	r.healthy = make([]bool, len(r.nodes))
	for i, n := range r.nodes {
		if n.State != engine.NodeOnline {
			continue
		}
		o := n.Overloaded()
		if o.Kind != "" {
			r.stats.Overloaded = append(r.stats.Overloaded, NodeOverload{Node: n.Name, Kind: o.Kind, Reason: o.Reason})
		}
		r.healthy[i] = o.Kind != engine.OverloadLowMemory && r.now.Sub(n.LastSeen) <= n.LeaseOf()
	}
}

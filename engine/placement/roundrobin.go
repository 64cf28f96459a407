package placement

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// roundRobinForget is how long a node may go unoffered before RoundRobin
// drops its state: it has left the cluster, or its type of work stopped.
// Shorter gaps (a node busy for a while, ineligible for one job) keep the
// node's place in the rotation.
const roundRobinForget = 10 * time.Minute

// RoundRobin is smooth weighted round-robin, as in nginx: each call every
// offered node gains its effective weight, the node with the most is picked
// and pays the sum of all the weights. Over a cycle each node is picked in
// proportion to its weight, spread out rather than in bursts (weights 5, 1, 1
// give a a b a c a a). State is kept per node name across calls; a node not
// offered for roundRobinForget is dropped. The zero value is ready to use.
type RoundRobin struct {
	mu    sync.Mutex
	peers map[string]*roundRobinPeer
}

// roundRobinPeer is one node's place in the rotation.
type roundRobinPeer struct {
	current float64
	seen    time.Time
}

// NewRoundRobin returns a smooth weighted round-robin selector with no history.
func NewRoundRobin() *RoundRobin { return &RoundRobin{} }

// Name returns "roundrobin".
func (*RoundRobin) Name() string { return SelectorRoundRobin }

// Order picks the next node of the rotation and puts it first; the others
// follow in the order the rotation would pick them next (current weight
// descending, then name), so a decline falls back sensibly.
func (r *RoundRobin) Order(job *engine.Job, nodes []*engine.Node, now time.Time) []*engine.Node {
	if len(nodes) == 0 {
		return []*engine.Node{}
	}
	first := r.Pick(job, nodes, now)
	return append([]*engine.Node{first}, r.Rest(job, nodes, first, now)...)
}

// Pick moves the rotation on by one call and returns the node it picks.
func (r *RoundRobin) Pick(_ *engine.Job, nodes []*engine.Node, now time.Time) *engine.Node {
	if len(nodes) == 0 {
		return nil
	}
	allZero := true
	for _, n := range nodes {
		if EffectiveWeight(n, now) > 0 {
			allZero = false
			break
		}
	}
	weight := func(n *engine.Node) float64 {
		if allZero { // nothing to prefer: rotate evenly rather than stick to one
			return 1
		}
		return EffectiveWeight(n, now)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.peers == nil {
		r.peers = map[string]*roundRobinPeer{}
	}
	var total float64
	var best *engine.Node
	var bestPeer *roundRobinPeer
	for _, n := range nodes {
		p := r.peers[n.Name]
		if p == nil {
			p = &roundRobinPeer{}
			r.peers[n.Name] = p
		}
		w := weight(n)
		p.current += w
		p.seen = now
		total += w
		if best == nil || p.current > bestPeer.current || (p.current == bestPeer.current && n.Name < best.Name) {
			best, bestPeer = n, p
		}
	}
	bestPeer.current -= total
	for name, p := range r.peers {
		if now.Sub(p.seen) > roundRobinForget {
			delete(r.peers, name)
		}
	}
	return best
}

// Rest returns the nodes other than first in the order the rotation would
// pick them next: current weight descending, then name. It moves nothing.
func (r *RoundRobin) Rest(_ *engine.Job, nodes []*engine.Node, first *engine.Node, _ time.Time) []*engine.Node {
	type ranked struct {
		node    *engine.Node
		current float64
	}
	rest := make([]ranked, 0, len(nodes))
	r.mu.Lock()
	for _, n := range nodes {
		if n == first {
			continue
		}
		var current float64
		if p := r.peers[n.Name]; p != nil {
			current = p.current
		}
		rest = append(rest, ranked{n, current})
	}
	r.mu.Unlock()
	slices.SortFunc(rest, func(a, b ranked) int {
		if c := cmp.Compare(b.current, a.current); c != 0 {
			return c
		}
		return strings.Compare(a.node.Name, b.node.Name)
	})
	out := make([]*engine.Node, len(rest))
	for i, x := range rest {
		out[i] = x.node
	}
	return out
}

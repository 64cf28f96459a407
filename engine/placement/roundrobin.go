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
func (r *RoundRobin) Order(_ *engine.Job, nodes []*engine.Node, now time.Time) []*engine.Node {
	if len(nodes) == 0 {
		return []*engine.Node{}
	}
	weights := make([]float64, len(nodes))
	allZero := true
	for i, n := range nodes {
		weights[i] = EffectiveWeight(n, now)
		allZero = allZero && weights[i] == 0
	}
	if allZero { // nothing to prefer: rotate evenly rather than stick to one
		for i := range weights {
			weights[i] = 1
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.peers == nil {
		r.peers = map[string]*roundRobinPeer{}
	}
	peers := make([]*roundRobinPeer, len(nodes))
	var total float64
	best := -1
	for i, n := range nodes {
		p := r.peers[n.Name]
		if p == nil {
			p = &roundRobinPeer{}
			r.peers[n.Name] = p
		}
		p.current += weights[i]
		p.seen = now
		peers[i] = p
		total += weights[i]
		if best < 0 || p.current > peers[best].current ||
			(p.current == peers[best].current && n.Name < nodes[best].Name) {
			best = i
		}
	}
	peers[best].current -= total
	for name, p := range r.peers {
		if now.Sub(p.seen) > roundRobinForget {
			delete(r.peers, name)
		}
	}

	rest := make([]int, 0, len(nodes)-1)
	for i := range nodes {
		if i != best {
			rest = append(rest, i)
		}
	}
	slices.SortFunc(rest, func(a, b int) int {
		if c := cmp.Compare(peers[b].current, peers[a].current); c != 0 {
			return c
		}
		return strings.Compare(nodes[a].Name, nodes[b].Name)
	})
	out := make([]*engine.Node, 0, len(nodes))
	out = append(out, nodes[best])
	for _, i := range rest {
		out = append(out, nodes[i])
	}
	return out
}

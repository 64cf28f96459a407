package placement

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Random orders nodes by weighted random choice: the first node is node i
// with probability EffectiveWeight(i) / total, the second is drawn the same
// way from the rest, and so on, so a declined offer falls back to another
// weighted draw. Nodes of weight 0 come last, in uniform random order.
type Random struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewRandom returns a weighted random selector drawing from rng; nil seeds
// a private generator from the runtime's random source. Tests pass a seeded
// generator for repeatable orders.
func NewRandom(rng *rand.Rand) *Random {
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &Random{rng: rng}
}

// Name returns "random".
func (*Random) Name() string { return SelectorRandom }

// Pick draws the first node of a weighted random order in one pass: the
// node with the largest key of Order's keys.
func (r *Random) Pick(_ *engine.Job, nodes []*engine.Node, now time.Time) *engine.Node {
	var best randomKey
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		k := r.key(n, now)
		if best.node == nil || (k.weighted && !best.weighted) || (k.weighted == best.weighted && k.key > best.key) {
			best = k
		}
	}
	return best.node
}

// Rest draws a weighted random order of the nodes other than first. Keys
// are drawn afresh: given which node came first, the order of the others
// in Order is a weighted random order of them, so Pick then Rest orders
// the nodes with the same chances as Order.
func (r *Random) Rest(job *engine.Job, nodes []*engine.Node, first *engine.Node, now time.Time) []*engine.Node {
	others := make([]*engine.Node, 0, len(nodes))
	for _, n := range nodes {
		if n != first {
			others = append(others, n)
		}
	}
	return r.Order(job, others, now)
}

// key draws one node's key; r.mu must be held.
func (r *Random) key(n *engine.Node, now time.Time) randomKey {
	u := 1 - r.rng.Float64() // (0, 1]: log(0) would be -Inf for every weight
	if w := EffectiveWeight(n, now); w > 0 {
		return randomKey{node: n, weighted: true, key: math.Log(u) / w}
	}
	return randomKey{node: n, key: u}
}

// randomKey ranks one node in one draw.
type randomKey struct {
	node     *engine.Node
	weighted bool
	key      float64
}

// Order draws a weighted random order. Each node gets the key log(u)/w for a
// uniform u in (0, 1] and nodes are sorted by key, largest first (weighted
// sampling without replacement, Efraimidis and Spirakis): one pass and one
// sort instead of n draws over a shrinking total.
func (r *Random) Order(_ *engine.Job, nodes []*engine.Node, now time.Time) []*engine.Node {
	keys := make([]randomKey, len(nodes))
	r.mu.Lock()
	for i, n := range nodes {
		keys[i] = r.key(n, now)
	}
	r.mu.Unlock()
	slices.SortFunc(keys, func(a, b randomKey) int {
		if a.weighted != b.weighted {
			if a.weighted {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.key, a.key); c != 0 {
			return c
		}
		return strings.Compare(a.node.Name, b.node.Name)
	})
	out := make([]*engine.Node, len(keys))
	for i, k := range keys {
		out[i] = k.node
	}
	return out
}

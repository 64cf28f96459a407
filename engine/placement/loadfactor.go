package placement

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// loadFactorTie is the width of a load-factor bucket: nodes whose load
// factors fall in one bucket count as tied and go to the larger max load.
const loadFactorTie = 0.01

// bucketNudge keeps a load factor that is a whole multiple of the bucket
// width on paper (0.29 = 29 × 0.01) in its own bucket despite float
// rounding (0.29 / 0.01 = 28.999…). It is far below any real difference.
const bucketNudge = 1e-9

// LoadFactorOf is a node's current load over its max load. A node without a
// max load counts as full (+Inf) unless it carries no load either.
func LoadFactorOf(n *engine.Node) float64 {
	if n.MaxLoad <= 0 {
		if n.Load <= 0 {
			return 0
		}
		return math.Inf(1)
	}
	return n.Load / n.MaxLoad
}

// loadFactorBucket maps a load factor to its tie bucket. Bucketing rather
// than comparing two factors with a tolerance keeps the order transitive:
// with a tolerance, 0.000 ~ 0.008 ~ 0.016 but 0.000 < 0.016.
func loadFactorBucket(lf float64) float64 {
	if math.IsNaN(lf) || math.IsInf(lf, 1) {
		return math.Inf(1)
	}
	return math.Floor(lf/loadFactorTie + bucketNudge)
}

// CompareLoadFactor orders two nodes for the loadfactor selector: by load
// factor bucket ascending, then max load descending (the more capable node
// wins a near tie), then exact load factor ascending, then name. It is a
// strict total order on nodes with distinct names, so sorting is
// deterministic whatever order the nodes come in.
func CompareLoadFactor(a, b *engine.Node) int {
	lfa, lfb := LoadFactorOf(a), LoadFactorOf(b)
	if c := cmp.Compare(loadFactorBucket(lfa), loadFactorBucket(lfb)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.MaxLoad, a.MaxLoad); c != 0 {
		return c
	}
	if c := cmp.Compare(lfa, lfb); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// LoadFactor is the default selector: least loaded first, relative to each
// node's capacity (CompareLoadFactor). It has no state; the zero value is
// ready to use.
type LoadFactor struct{}

// Name returns "loadfactor".
func (LoadFactor) Name() string { return SelectorLoadFactor }

// loadFactorKey is one node's CompareLoadFactor figures, computed once per
// Order rather than once per comparison: a round orders every job it places.
type loadFactorKey struct {
	bucket, maxLoad, lf float64
	node                *engine.Node
}

// Pick is the first node of Order, found in one pass.
func (LoadFactor) Pick(_ *engine.Job, nodes []*engine.Node, _ time.Time) *engine.Node {
	var best *engine.Node
	for _, n := range nodes {
		if best == nil || CompareLoadFactor(n, best) < 0 {
			best = n
		}
	}
	return best
}

// Rest is Order without first.
func (s LoadFactor) Rest(job *engine.Job, nodes []*engine.Node, first *engine.Node, now time.Time) []*engine.Node {
	return slices.DeleteFunc(s.Order(job, nodes, now), func(n *engine.Node) bool { return n == first })
}

// Order sorts the nodes by CompareLoadFactor.
func (LoadFactor) Order(_ *engine.Job, nodes []*engine.Node, _ time.Time) []*engine.Node {
	keys := make([]loadFactorKey, len(nodes))
	for i, n := range nodes {
		lf := LoadFactorOf(n)
		keys[i] = loadFactorKey{bucket: loadFactorBucket(lf), maxLoad: n.MaxLoad, lf: lf, node: n}
	}
	slices.SortFunc(keys, func(a, b loadFactorKey) int {
		// The same order as CompareLoadFactor, on the precomputed figures.
		if a.bucket != b.bucket {
			return cmp.Compare(a.bucket, b.bucket)
		}
		if a.maxLoad != b.maxLoad {
			return cmp.Compare(b.maxLoad, a.maxLoad)
		}
		if a.lf != b.lf {
			return cmp.Compare(a.lf, b.lf)
		}
		return strings.Compare(a.node.Name, b.node.Name)
	})
	out := make([]*engine.Node, len(keys))
	for i, k := range keys {
		out[i] = k.node
	}
	return out
}

package placement

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Shares of the lowerweight cost, after DolphinScheduler's lower-weight
// selector: load dominates, memory and size follow.
const (
	costShareLoad   = 0.7
	costShareMemory = 0.2
	costShareCores  = 0.1
	// costWeightBase is the default node weight: at that weight, fully
	// warmed up, the cost is the raw sum of its shares.
	costWeightBase = 100
)

// LowerWeightCost is a node's cost for the lowerweight selector; lower is
// better:
//
//	pressure = max(LoadAvg / Cores, Load / MaxLoad)
//	memory   = 1 / (1 + MemAvailable in GiB)
//	cores    = 1 / Cores
//	cost     = (0.7·pressure + 0.2·memory + 0.1·cores) × 100 / EffectiveWeight
//
// pressure takes the worse of what the machine reports (load average per
// core, which lags) and jobctl's own live load factor (which moves as soon
// as a job is placed, so one round does not pile every job on one node).
// Figures the node has not reported count as no pressure and no memory
// cost; unknown cores count as one. The weight divides the cost, so a heavier
// node looks cheaper and a warming-up one (EffectiveWeight near 1) far
// dearer; weight 0 makes the cost +Inf.
func LowerWeightCost(n *engine.Node, now time.Time) float64 {
	cores := float64(max(n.Cores, 1))
	pressure := n.LoadAvg / cores
	if n.MaxLoad > 0 {
		pressure = max(pressure, n.Load/n.MaxLoad)
	}
	var memory float64
	if n.MemAvailable > 0 {
		memory = 1 / (1 + float64(n.MemAvailable)/(1<<30))
	}
	raw := costShareLoad*pressure + costShareMemory*memory + costShareCores/cores
	w := EffectiveWeight(n, now)
	if w <= 0 {
		return math.Inf(1)
	}
	return raw * costWeightBase / w
}

// LowerWeight orders nodes by LowerWeightCost ascending, ties by name. It
// has no state; the zero value is ready to use.
type LowerWeight struct{}

// Name returns "lowerweight".
func (LowerWeight) Name() string { return SelectorLowerWeight }

// Pick is the first node of Order, found in one pass.
func (LowerWeight) Pick(_ *engine.Job, nodes []*engine.Node, now time.Time) *engine.Node {
	var best *engine.Node
	var bestCost float64
	for _, n := range nodes {
		c := LowerWeightCost(n, now)
		if best == nil || c < bestCost || (c == bestCost && n.Name < best.Name) {
			best, bestCost = n, c
		}
	}
	return best
}

// Rest is Order without first.
func (s LowerWeight) Rest(job *engine.Job, nodes []*engine.Node, first *engine.Node, now time.Time) []*engine.Node {
	return slices.DeleteFunc(s.Order(job, nodes, now), func(n *engine.Node) bool { return n == first })
}

// Order sorts the nodes by cost, cheapest first.
func (LowerWeight) Order(_ *engine.Job, nodes []*engine.Node, now time.Time) []*engine.Node {
	type costed struct {
		node *engine.Node
		cost float64
	}
	cs := make([]costed, len(nodes))
	for i, n := range nodes {
		cs[i] = costed{n, LowerWeightCost(n, now)}
	}
	slices.SortFunc(cs, func(a, b costed) int {
		if c := cmp.Compare(a.cost, b.cost); c != 0 {
			return c
		}
		return strings.Compare(a.node.Name, b.node.Name)
	})
	out := make([]*engine.Node, len(cs))
	for i, c := range cs {
		out[i] = c.node
	}
	return out
}

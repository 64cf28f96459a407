package placement

import (
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Preferred sends jobs of one type to a set of nodes first while they are
// not too busy (the original design's encoding workers): the listed nodes
// whose load factor is below Threshold go first, in Inner's order, then
// every other node, also in Inner's order. Jobs of other types get Inner's
// order unchanged. Wrap once per type to prefer nodes for several types.
type Preferred struct {
	Type      string
	Nodes     []string
	Threshold float64  // load factor (LoadFactorOf) under which a listed node is preferred
	Inner     Selector // nil means LoadFactor
}

// Name is the inner selector's name: preference adjusts, it does not replace.
func (p Preferred) Name() string { return p.inner().Name() }

func (p Preferred) inner() Selector {
	if p.Inner == nil {
		return LoadFactor{}
	}
	return p.Inner
}

// Order puts the preferred nodes with spare capacity first.
func (p Preferred) Order(job *engine.Job, nodes []*engine.Node, now time.Time) []*engine.Node {
	ordered := p.inner().Order(job, nodes, now)
	if job.Type != p.Type || len(p.Nodes) == 0 {
		return ordered
	}
	out := make([]*engine.Node, 0, len(ordered))
	rest := make([]*engine.Node, 0, len(ordered))
	for _, n := range ordered {
		if slices.Contains(p.Nodes, n.Name) && LoadFactorOf(n) < p.Threshold {
			out = append(out, n)
		} else {
			rest = append(rest, n)
		}
	}
	return append(out, rest...)
}

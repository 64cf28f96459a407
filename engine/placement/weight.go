package placement

import (
	"time"

	"github.com/jobctl/jobctl/engine"
)

// EffectiveWeight is a node's weight at time now. Right after the node
// starts it is 1, and it grows linearly to the configured Weight over the
// node's warm-up period, so a fresh process (cold caches, a JIT-compiled
// handler) is eased into work. Without a warm-up or a known start time, or
// once warm-up is over, it is Weight. A weight of 0 or less is 0: such a
// node is tried only after every weighted one.
func EffectiveWeight(n *engine.Node, now time.Time) float64 {
	w := float64(n.Weight)
	if w <= 0 {
		return 0
	}
	warmup := time.Duration(n.Warmup)
	if warmup <= 0 || n.StartedAt.IsZero() || w <= 1 {
		return w
	}
	up := now.Sub(n.StartedAt)
	switch {
	case up >= warmup:
		return w
	case up <= 0: // a clock behind the node's start: just started
		return 1
	}
	return 1 + (w-1)*float64(up)/float64(warmup)
}

package placement

import (
	"fmt"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Selector orders a job's eligible nodes, best first; the dispatcher offers
// the job to them in that order. Implementations are safe for concurrent
// use; stateful ones (RoundRobin, Random) keep their state between calls.
type Selector interface {
	// Name is the --selector value that picks this ordering.
	Name() string
	// Order returns the nodes best first as a new slice; nodes is left as
	// it is. now drives warm-up and state expiry.
	Order(job *engine.Job, nodes []*engine.Node, now time.Time) []*engine.Node
}

// Picker is a Selector that can pick the first node of its order without
// ordering the rest. Most offers are accepted by the first node, so the
// dispatcher picks and asks for the rest only after a decline. Pick changes
// the selector's state as Order would; Rest changes no rotation and returns
// the other nodes as Order would have put them after first. So Pick then
// Rest, with no call in between, is Order (for Random: orders with the same
// chances, as its draws differ).
type Picker interface {
	Selector
	// Pick returns the node Order would put first; nil for no nodes.
	Pick(job *engine.Job, nodes []*engine.Node, now time.Time) *engine.Node
	// Rest returns nodes without first, in Order's order.
	Rest(job *engine.Job, nodes []*engine.Node, first *engine.Node, now time.Time) []*engine.Node
}

// Selector names, as `jobctl serve --selector` takes them.
const (
	SelectorLoadFactor  = "loadfactor"
	SelectorRandom      = "random"
	SelectorRoundRobin  = "roundrobin"
	SelectorLowerWeight = "lowerweight"
)

// SelectorNames lists the valid selector names, the default first.
var SelectorNames = []string{SelectorLoadFactor, SelectorRandom, SelectorRoundRobin, SelectorLowerWeight}

// ParseSelector returns a new selector for a name, case-insensitively.
// Each call returns fresh state.
func ParseSelector(name string) (Selector, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case SelectorLoadFactor:
		return LoadFactor{}, nil
	case SelectorRandom:
		return NewRandom(nil), nil
	case SelectorRoundRobin:
		return NewRoundRobin(), nil
	case SelectorLowerWeight:
		return LowerWeight{}, nil
	}
	return nil, fmt.Errorf("unknown selector %q (valid: %s)", name, strings.Join(SelectorNames, ", "))
}

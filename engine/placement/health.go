package placement

import (
	"fmt"

	"github.com/jobctl/jobctl/engine"
)

// stateReason says why a node that is not ONLINE takes no work.
func stateReason(s engine.NodeState) string {
	switch s {
	case engine.NodeOffline:
		return "offline"
	case engine.NodeMaintenance:
		return "in maintenance"
	case engine.NodeError:
		return "in error state"
	}
	return fmt.Sprintf("state %q", string(s))
}

// loadAvgLimit is the load average above which a node counts as
// overloaded: its configured limit, else twice its cores; 0 when neither is
// known, and then there is no check.
func loadAvgLimit(n *engine.Node) float64 {
	if n.MaxLoadAvg > 0 {
		return n.MaxLoadAvg
	}
	return float64(2 * n.Cores)
}

// healthCheck reports a node that its own machine says is overloaded: load
// average above its limit, or free memory under its reserve. Figures a node
// has not reported (zero) are not held against it.
func healthCheck(n *engine.Node) (Cause, string) {
	if limit := loadAvgLimit(n); limit > 0 && n.LoadAvg > limit {
		return CauseOverloaded, fmt.Sprintf("overloaded: load average %s above %s", num(n.LoadAvg), num(limit))
	}
	if n.MemAvailable > 0 && n.ReservedMemory > 0 && n.MemAvailable < n.ReservedMemory {
		return CauseLowMemory, fmt.Sprintf("free memory %s under reserve %s", bytesIEC(n.MemAvailable), bytesIEC(n.ReservedMemory))
	}
	return CauseNone, ""
}

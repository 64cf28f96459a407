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

// healthCheck reports a node that its own machine says is overloaded
// (engine.Node.Overloaded).
func healthCheck(n *engine.Node) (Cause, string) {
	switch o := n.Overloaded(); o.Kind {
	case engine.OverloadLoadAvg:
		return CauseOverloaded, "overloaded: " + o.Reason
	case engine.OverloadLowMemory:
		return CauseLowMemory, o.Reason
	}
	return CauseNone, ""
}

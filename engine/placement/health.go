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

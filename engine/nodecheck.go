package engine

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// MaxNodeName bounds node names, which are keys: every backend can index
// this many bytes (a DNS host name has at most 253).
const MaxNodeName = 255

// ValidateNodeClaim checks a starting node's row. Every store calls it
// before it writes, so a node is refused the same way on every backend.
func ValidateNodeClaim(p NodeClaimParams) error {
	n := p.Node
	if strings.TrimSpace(n.Name) == "" {
		return fmt.Errorf("register node: the name is empty")
	}
	if len(n.Name) > MaxNodeName {
		return fmt.Errorf("register node %.40s…: the name is longer than %d bytes", n.Name, MaxNodeName)
	}
	if n.Lease < 0 {
		return fmt.Errorf("register node %s: node lease %s is negative", n.Name, time.Duration(n.Lease))
	}
	if n.Process.PID < 0 || n.Process.StartTime < 0 {
		return fmt.Errorf("register node %s: process %d started at %d is not a process", n.Name, n.Process.PID, n.Process.StartTime)
	}
	if math.IsNaN(n.MaxLoad) || math.IsInf(n.MaxLoad, 0) || n.MaxLoad < 0 {
		return fmt.Errorf("register node %s: max load %v is not a number >= 0", n.Name, n.MaxLoad)
	}
	for _, f := range []struct {
		what  string
		value int
	}{{"max jobs", n.MaxJobs}, {"weight", n.Weight}, {"cores", n.Cores}} {
		// 32-bit columns on every SQL backend; refuse rather than let one clip.
		if f.value < 0 || f.value > math.MaxInt32 {
			return fmt.Errorf("register node %s: %s %d is out of range", n.Name, f.what, f.value)
		}
	}
	return nil
}

// ValidateHealthState refuses a state NodeSetState may not record: only
// ONLINE, OFFLINE and ERROR are health states. MAINTENANCE is not stored,
// or the next health write would end it.
func ValidateHealthState(name string, state NodeState) error {
	switch state {
	case NodeOnline, NodeOffline, NodeError:
		return nil
	case NodeMaintenance:
		return fmt.Errorf("set state of node %s: MAINTENANCE is not a health state; use NodeSetMaintenance", name)
	}
	return fmt.Errorf("set state of node %s: unknown state %q (valid: ONLINE, OFFLINE, ERROR)", name, state)
}

// ValidateLeaseAcquire refuses a lease request no store can grant: an empty
// owner, or a TTL that is not positive.
func ValidateLeaseAcquire(owner string, ttl time.Duration) error {
	if owner == "" {
		return fmt.Errorf("acquire lease: the owner is empty")
	}
	if ttl <= 0 {
		return fmt.Errorf("acquire lease: ttl %s is not positive", ttl)
	}
	return nil
}

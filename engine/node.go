package engine

import (
	"fmt"
	"time"
)

// NodeState is the state of a node as placement and the CLI see it: its
// health (ONLINE, OFFLINE, ERROR), which the node itself and the heartbeat
// monitor set, with MAINTENANCE standing in for ONLINE while an operator
// holds the node out of dispatch.
type NodeState string

// Node states.
const (
	NodeOnline  NodeState = "ONLINE"
	NodeOffline NodeState = "OFFLINE"
	// NodeMaintenance is never stored: a node shows it when it is ONLINE
	// and its Maintenance flag is on. The flag is a separate column so that
	// no health write (a clean shutdown, the monitor marking the node
	// OFFLINE, the node coming back ONLINE) can clear an operator's choice.
	NodeMaintenance NodeState = "MAINTENANCE"
	NodeError       NodeState = "ERROR"
)

// Node is one `jobctl serve` process as registered in the store.
type Node struct {
	Name            string        `json:"name"`
	URL             string        `json:"url"`
	MaxLoad         float64       `json:"max_load"`
	MaxJobs         int           `json:"max_jobs"`
	Weight          int           `json:"weight"`
	Warmup          Duration      `json:"warmup"`
	AcceptExceeding bool          `json:"accept_exceeding"`
	Candidate       bool          `json:"candidate"`   // takes part in the lease election
	Services        []NodeService `json:"services"`    // job types this node runs
	State           NodeState     `json:"state"`       // health; MAINTENANCE when ONLINE with Maintenance on
	Maintenance     bool          `json:"maintenance"` // set by an operator; outlives health changes and restarts
	StartedAt       time.Time     `json:"started_at"`
	LastSeen        time.Time     `json:"last_seen"`
	Lease           Duration      `json:"node_lease"` // silent this long, the node has stopped its runs

	// Reported health, refreshed every touch; zero when unknown.
	LoadAvg        float64 `json:"load_avg"`
	MaxLoadAvg     float64 `json:"max_load_avg"`    // overloaded above this load average; 0: no limit
	MemAvailable   int64   `json:"mem_available"`   // bytes
	ReservedMemory int64   `json:"reserved_memory"` // overloaded with less free memory
	Cores          int     `json:"cores"`

	// Live figures, computed from the load-holding jobs, not stored.
	Load       float64 `json:"load"`
	Running    int     `json:"running"`
	Dispatcher bool    `json:"dispatcher"` // holds the lease now
}

// DefaultNodeLease is how long a node may go without recording its liveness
// in the store before it stops its own runs; MinNodeLease is the shortest
// lease a node accepts.
const (
	DefaultNodeLease = 10 * time.Second
	MinNodeLease     = time.Second
)

// A node touches its row every NodeTouchInterval. One not touched for
// NodeStaleAfter is gone: its name may be taken by a new process, and its
// jobs may be recovered once heartbeats also marked it OFFLINE.
const (
	NodeTouchInterval = 2 * time.Second
	NodeStaleAfter    = 3 * NodeTouchInterval
)

// NodeService is one job type a node runs, with the defaults its
// configuration gives jobs of that type (zero: not configured).
type NodeService struct {
	Type    string   `json:"type"`
	Load    float64  `json:"load,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
}

// Offers reports whether the node runs jobs of the given type.
func (n *Node) Offers(jobType string) bool {
	_, ok := n.Service(jobType)
	return ok
}

// Service returns the node's service for a job type.
func (n *Node) Service(jobType string) (NodeService, bool) {
	for _, s := range n.Services {
		if s.Type == jobType {
			return s, true
		}
	}
	return NodeService{}, false
}

// Overload kinds: what makes a node's own machine too busy for new work.
const (
	OverloadLoadAvg   = "load-average"
	OverloadLowMemory = "low-memory"
)

// Overload is why a node's machine takes no new work now; the zero value
// means it is not overloaded.
type Overload struct {
	Kind   string // OverloadLoadAvg or OverloadLowMemory; "" when not overloaded
	Reason string // "load average 9.1 above 4", "free memory 120MiB under reserve 1GiB"
}

// Overloaded reports whether the node's last health report puts it above
// its load-average limit or under its memory reserve. Figures the node has
// not reported (zero) are not held against it; a MaxLoadAvg of 0 means the
// node has no load-average limit.
func (n *Node) Overloaded() Overload {
	if n.MaxLoadAvg > 0 && n.LoadAvg > n.MaxLoadAvg {
		return Overload{Kind: OverloadLoadAvg,
			Reason: fmt.Sprintf("load average %s above %s", FormatNumber(n.LoadAvg), FormatNumber(n.MaxLoadAvg))}
	}
	if n.MemAvailable > 0 && n.ReservedMemory > 0 && n.MemAvailable < n.ReservedMemory {
		return Overload{Kind: OverloadLowMemory,
			Reason: fmt.Sprintf("free memory %s under reserve %s", FormatBytes(n.MemAvailable), FormatBytes(n.ReservedMemory))}
	}
	return Overload{}
}

// DefaultMaxLoadAvg is the load-average limit of a node that sets none:
// twice its cores.
func DefaultMaxLoadAvg(cores int) float64 { return float64(2 * cores) }

// NodeLoad is the load-holding work on one node.
type NodeLoad struct {
	Load    float64
	Running int
}

// Lease is the single dispatcher lease row, read together with the
// database's clock so validity is judged on one shared clock.
type Lease struct {
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expires_at"`
	Now       time.Time `json:"-"`
}

// Valid reports whether someone holds the lease now.
func (l Lease) Valid() bool { return l.Owner != "" && l.ExpiresAt.After(l.Now) }

// Remaining is how long the lease stays valid without renewal.
func (l Lease) Remaining() time.Duration {
	if !l.Valid() {
		return 0
	}
	return l.ExpiresAt.Sub(l.Now)
}

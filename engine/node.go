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
	Process         NodeProcess   `json:"process"`    // the process that holds the name
	// BeatMissedAt is when a dispatcher's heartbeat to the node first went
	// unanswered in a row (database clock); nil while it answers.
	BeatMissedAt *time.Time `json:"beat_missed_at"`

	// Reported health, refreshed every touch; zero when unknown.
	LoadAvg        float64 `json:"load_avg"`
	MaxLoadAvg     float64 `json:"max_load_avg"`    // overloaded above this load average; 0: no limit
	MemAvailable   int64   `json:"mem_available"`   // bytes
	ReservedMemory int64   `json:"reserved_memory"` // overloaded with less free memory
	Cores          int     `json:"cores"`
	// RunningUsage is what the node measured of each job it runs, as of
	// its last liveness report (LastSeen).
	RunningUsage []LiveUsage `json:"running_usage"`

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

// NodeLeaseMargin is how much longer than its node lease a node must have
// been silent, on the database clock, before the lease holder restarts its
// jobs or another process takes its name. The node measures its lease from
// the start of its last successful touch, which is no later than the
// last_seen that touch stored, so the margin covers what happens after the
// lease ran out: the watchdog noticing (it checks a few times a second) and
// killing every job's process tree, and a touch statement that the database
// executed well after the node's clock read its start (a slow commit, a
// queue for SQLite's one writer). Two seconds is a generous bound for both,
// and it costs only two seconds of a dead node's jobs waiting.
const NodeLeaseMargin = 2 * time.Second

// LeaseOf is how long the node may stay silent before it has stopped its
// runs: its stored node lease, or DefaultNodeLease for a row written by a
// release that stored none.
func (n *Node) LeaseOf() time.Duration {
	if n.Lease > 0 {
		return time.Duration(n.Lease)
	}
	return DefaultNodeLease
}

// GoneAfter is how long the node must have been silent on the database
// clock before it surely has stopped its runs: its lease and the margin.
func (n *Node) GoneAfter() time.Duration { return n.LeaseOf() + NodeLeaseMargin }

// NodeProcess identifies the process that registered a node: the machine
// it runs on (Host: the boot id, else the hostname, so a reboot is another
// machine), its pid and its start time in clock ticks after boot (the
// pid's reuse by another process has another start time). Zero when
// unknown: written by an older release, or on a system without /proc.
type NodeProcess struct {
	Host      string `json:"host_id"`
	Hostname  string `json:"hostname"`
	PID       int    `json:"pid"`
	StartTime int64  `json:"start_time"`
}

// String names the process for people: "pid 4711 on host build-3".
func (p NodeProcess) String() string {
	host := p.Hostname
	if host == "" {
		host = p.Host
	}
	if p.PID == 0 {
		if host == "" {
			return "an unknown process"
		}
		return "a process on host " + host
	}
	if host == "" {
		return fmt.Sprintf("pid %d", p.PID)
	}
	return fmt.Sprintf("pid %d on host %s", p.PID, host)
}

// NodeOnlineError is the refusal of a registration of name while held, the
// row of a live process, is not free: it names that process and says how
// long, at the database's now, until the name is free. It matches
// ErrNodeOnline.
func NodeOnlineError(held *Node, now time.Time) error {
	age := now.Sub(held.LastSeen)
	wait := max(held.GoneAfter()-age, 0)
	return fmt.Errorf("%w: %q is held by %s (%s, last seen %s ago); stop that process or wait %s until the name is free",
		ErrNodeOnline, held.Name, held.Process, held.State, age.Round(time.Millisecond), wait.Round(100*time.Millisecond))
}

// NodeLiveError is the refusal of an operation on a node that is live,
// not OFFLINE and seen within staleAfter, at the database's now.
func NodeLiveError(n *Node, now time.Time, staleAfter time.Duration) error {
	age := now.Sub(n.LastSeen)
	return fmt.Errorf("%w: %q is %s and was last seen %s ago; stop that process or wait %s until it counts as gone",
		ErrNodeOnline, n.Name, n.State, age.Round(time.Millisecond), max(staleAfter-age, 0).Round(time.Millisecond))
}

// NodeTakenError is the refusal of a touch by a process that no longer
// holds its node's row: held, the row, names another process now.
func NodeTakenError(held *Node) error {
	return fmt.Errorf("%w: %q was taken over by %s", ErrNodeOnline, held.Name, held.Process)
}

// NodeGone reports whether n counts as gone at the database's now: OFFLINE,
// or not seen for staleAfter. Only a gone node may be removed.
func NodeGone(n *Node, now time.Time, staleAfter time.Duration) bool {
	return n.State == NodeOffline || !n.LastSeen.After(now.Add(-staleAfter))
}

// NodeFree reports whether a starting process, p, may take over held, the
// row of its name, at the database's now: the former holder has been
// silent past its GoneAfter, or it ran on the same host and gone says it no
// longer exists. byIdentity tells the second case, in which the takeover
// must be guarded on held's process.
func NodeFree(held *Node, p NodeProcess, now time.Time, gone func(NodeProcess) bool) (free, byIdentity bool) {
	if now.Sub(held.LastSeen) > held.GoneAfter() {
		return true, false
	}
	if gone != nil && held.Process.PID > 0 && held.Process.SameHost(p) && !held.Process.Same(p) && gone(held.Process) {
		return true, true
	}
	return false, false
}

// Same reports whether p and o name one process: host, pid and start time.
func (p NodeProcess) Same(o NodeProcess) bool {
	return p.Host == o.Host && p.PID == o.PID && p.StartTime == o.StartTime
}

// SameHost reports whether both processes ran on one known machine.
func (p NodeProcess) SameHost(o NodeProcess) bool { return p.Host != "" && p.Host == o.Host }

// NodeService is one job type a node runs, with the defaults its
// configuration gives jobs of that type (zero: not configured).
type NodeService struct {
	Type    string   `json:"type"`
	Load    float64  `json:"load,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
	// Memory is the memory limit, in bytes, of the type's jobs that set
	// none of their own, where the node enforces limits; 0: none.
	Memory int64 `json:"memory,omitempty"`
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

// Overloaded reports whether the node's last health report puts it under
// its memory reserve or above its load-average limit, the memory first: it
// is the gate that holds (see placement.Filter). Figures the node has not
// reported (zero) are not held against it; a MaxLoadAvg of 0 means the node
// has no load-average limit.
func (n *Node) Overloaded() Overload {
	if n.MemAvailable > 0 && n.ReservedMemory > 0 && n.MemAvailable < n.ReservedMemory {
		return Overload{Kind: OverloadLowMemory,
			Reason: fmt.Sprintf("free memory %s under reserve %s", FormatBytes(n.MemAvailable), FormatBytes(n.ReservedMemory))}
	}
	if n.MaxLoadAvg > 0 && n.LoadAvg > n.MaxLoadAvg {
		return Overload{Kind: OverloadLoadAvg,
			Reason: fmt.Sprintf("load average %s above %s", FormatNumber(n.LoadAvg), FormatNumber(n.MaxLoadAvg))}
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
	// Term counts the takings of the lease: it goes up whenever someone
	// takes it after it expired or was released, or another owner does; a
	// renewal keeps it. AcquiredAt is when the term began.
	Term       int64     `json:"term"`
	AcquiredAt time.Time `json:"acquired_at"`
	Now        time.Time `json:"-"`
}

// LeaseTerm is one term of the dispatcher lease, as its holder knows it.
// The zero value is no term: the lease is not held.
type LeaseTerm struct {
	Owner      string
	Term       int64
	AcquiredAt time.Time // database clock
}

// Held reports whether t names a term.
func (t LeaseTerm) Held() bool { return t.Term > 0 }

// Valid reports whether someone holds the lease now.
func (l Lease) Valid() bool { return l.Owner != "" && l.ExpiresAt.After(l.Now) }

// Remaining is how long the lease stays valid without renewal.
func (l Lease) Remaining() time.Duration {
	if !l.Valid() {
		return 0
	}
	return l.ExpiresAt.Sub(l.Now)
}

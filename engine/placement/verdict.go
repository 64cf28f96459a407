package placement

// Cause classifies why a node cannot take a job, for code that must act on
// the reason rather than print it.
type Cause string

// Causes, in the order Filter checks them.
const (
	CauseNone              Cause = ""                   // eligible
	CauseState             Cause = "state"              // not ONLINE
	CauseType              Cause = "type"               // does not offer the job's type
	CauseTooSmall          Cause = "too-small"          // max load below the job's load while a larger node exists
	CauseDeclinesOversized Cause = "declines-oversized" // largest node, but accept-exceeding is off
	CauseOverloaded        Cause = "overloaded"         // load average above its limit
	CauseLowMemory         Cause = "low-memory"         // free memory under its reserve
	CauseReserved          Cause = "reserved"           // kept for another, oversized job
	CauseBusy              Cause = "busy"               // no headroom now
	CauseMaxJobs           Cause = "max-jobs"           // runs its maximum number of jobs
)

// Permanent reports whether the cause holds however the load of the cluster
// changes: only the cluster itself changing (a node coming online, leaving
// maintenance, or configured otherwise) lifts it.
func (c Cause) Permanent() bool {
	switch c {
	case CauseState, CauseType, CauseTooSmall, CauseDeclinesOversized:
		return true
	}
	return false
}

// Verdict is one node's answer for one job, as `jobctl explain` shows it.
type Verdict struct {
	Node     string `json:"node"`
	Eligible bool   `json:"eligible"`
	// Reason is an operator-readable sentence fragment: why the node is
	// out, or on what terms it is in.
	Reason string `json:"reason"`
	Cause  Cause  `json:"cause,omitempty"`
}

// NeverRunnable reports whether no node of the cluster as it is could ever
// take the job: every node is out for a permanent cause (none ONLINE offers
// the type, or the job is oversized and every largest node declines
// oversized jobs). An empty cluster never runs anything.
func NeverRunnable(verdicts []Verdict) bool {
	for _, v := range verdicts {
		if v.Eligible || !v.Cause.Permanent() {
			return false
		}
	}
	return true
}

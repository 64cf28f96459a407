package dispatch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// Why a job no node took waits, beyond the placement.Cause that kept the
// most nodes out ("busy", "max-jobs", "overloaded", "low-memory",
// "reserved"): the keys of RoundStats.Waiting.
const (
	WaitNeverRunnable = "never-runnable" // no node of the cluster as it is could ever take it
	WaitDeclined      = "declined"       // every candidate declined the offer
	WaitUnreachable   = "unreachable"    // no candidate answered
)

// RoundStats counts what one round did.
type RoundStats struct {
	Considered int // dispatchable jobs looked at
	Dispatched int // accepted by a node
	Failed     int // refused permanently (412)
	Recovered  int // taken back from offline nodes or stale dispatches
	Rollbacks  int // rollback jobs created for jobs that failed finally
	// Waiting counts the jobs no node took, by why they wait: a
	// placement.Cause or one of the Wait constants. Nil when every job
	// looked at was placed.
	Waiting map[string]int
	// Skipped are the jobs of Waiting["busy"] that the round counted
	// without filtering the nodes for them: no node had room (see
	// (*round).full).
	Skipped int
	// More: the round stopped reading the queue once no node had room
	// left, so more jobs wait than Waiting counts.
	More bool
	// Overloaded are the ONLINE nodes whose own machine kept them out of
	// the round, with their figures.
	Overloaded []NodeOverload
	// AtLimit are the types whose limit held jobs back this round
	// (Waiting[WaitTypeLimit]), each with its limit.
	AtLimit map[string]int
}

// NodeOverload is one node held back by its machine's load or memory.
type NodeOverload struct {
	Node   string `json:"node"`
	Kind   string `json:"kind"`   // engine.OverloadLoadAvg or engine.OverloadLowMemory
	Reason string `json:"reason"` // "load average 9.1 above 4"
}

// Waited is the number of jobs no node took.
func (s RoundStats) Waited() int {
	total := 0
	for _, n := range s.Waiting {
		total += n
	}
	return total
}

func (s *RoundStats) wait(cause string) {
	if s.Waiting == nil {
		s.Waiting = map[string]int{}
	}
	s.Waiting[cause]++
}

// Summary says in one line which jobs wait and why, most common cause
// first, naming the overloaded nodes with their figures: "3 jobs wait:
// overloaded (node a: load average 9.1 above 4)", "5 jobs wait: 3 busy, 2
// never-runnable". It is "" when no job waits. The dispatcher logs it; the
// node runtime and the simulator may show it as it is.
func (s RoundStats) Summary() string {
	total := s.Waited()
	if total == 0 {
		return ""
	}
	causes := make([]string, 0, len(s.Waiting))
	for c := range s.Waiting {
		causes = append(causes, c)
	}
	slices.SortFunc(causes, func(a, b string) int {
		if c := cmp.Compare(s.Waiting[b], s.Waiting[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(causes))
	for i, c := range causes {
		part := c
		if len(causes) > 1 {
			part = fmt.Sprintf("%d %s", s.Waiting[c], c)
		}
		d := s.overloadDetail(c)
		if c == WaitTypeLimit {
			d = s.limitDetail()
		}
		if d != "" {
			part += " (" + d + ")"
		}
		parts[i] = part
	}
	noun := "jobs wait"
	switch {
	case s.More:
		noun = "or more jobs wait"
	case total == 1:
		noun = "job waits"
	}
	return fmt.Sprintf("%d %s: %s", total, noun, strings.Join(parts, ", "))
}

// overloadDetail names the nodes behind an overload cause.
func (s RoundStats) overloadDetail(cause string) string {
	kind := ""
	switch placement.Cause(cause) {
	case placement.CauseOverloaded:
		kind = engine.OverloadLoadAvg
	case placement.CauseLowMemory:
		kind = engine.OverloadLowMemory
	default:
		return ""
	}
	var nodes []string
	for _, o := range s.Overloaded {
		if o.Kind == kind {
			nodes = append(nodes, "node "+o.Node+": "+o.Reason)
		}
	}
	return strings.Join(nodes, "; ")
}

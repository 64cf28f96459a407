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
	Read       int // jobs read from the queues
	Considered int // dispatchable jobs planned
	Dispatched int // accepted by a node
	Failed     int // refused permanently (412)
	// Waiting counts the jobs read that no node took, by why they wait: a
	// placement.Cause or one of the Wait constants. Nil when every job
	// looked at was placed.
	Waiting map[string]int
	// Unread are the queues whose jobs the round left unread because none
	// of them could be placed: Waiting does not count them.
	Unread []UnreadQueue
	// More: the round stopped reading a queue it had not read to the end,
	// so more jobs wait than Waiting counts.
	More bool
	// Overloaded are the ONLINE nodes whose own machine kept them out of
	// the round, with their figures.
	Overloaded []NodeOverload
	// AtLimit are the types whose limit held jobs back this round
	// (Waiting[WaitTypeLimit]), each with its limit.
	AtLimit map[string]int
}

// UnreadQueue is a queue a round did not read, and why its jobs wait.
type UnreadQueue struct {
	Status engine.Status `json:"status"`
	Type   string        `json:"type"`
	// Cause is WaitNeverRunnable (no ONLINE node offers the type),
	// WaitTypeLimit (the type is at its limit) or placement.CauseBusy (no
	// open node has room for its lightest job).
	Cause    string  `json:"cause"`
	Lightest float64 `json:"lightest"`
	// Heaviest is set, with Cause WaitNeverRunnable, when the queue's
	// heaviest jobs are above every node's max load (Room) and no node of
	// that size takes more.
	Heaviest float64 `json:"heaviest,omitempty"`
	// Room is the most free load of an open node offering the type, when
	// Cause is busy and one has any; with Heaviest, the largest max load.
	Room float64 `json:"room"`
}

// unreadPart is one unread queue in a summary's words.
func (s RoundStats) unreadPart(u UnreadQueue) string {
	what := fmt.Sprintf("type %s (%s) %s", u.Type, u.Status, u.Cause)
	switch {
	case u.Cause == WaitNeverRunnable && u.Heaviest > 0:
		return fmt.Sprintf("%s, its jobs of load above %s (up to %s) are above every node's max load and the largest nodes decline them",
			what, engine.FormatNumber(u.Room), engine.FormatNumber(u.Heaviest))
	case u.Cause == WaitNeverRunnable:
		return what + ", no ONLINE node offers it"
	case u.Cause == WaitTypeLimit:
		return fmt.Sprintf("%s, at its limit of %d running", what, s.AtLimit[u.Type])
	case u.Cause == string(placement.CauseBusy):
		return fmt.Sprintf("%s, its lightest job needs %s and the most room on a node is %s", what,
			engine.FormatNumber(u.Lightest), engine.FormatNumber(u.Room))
	}
	if d := s.overloadDetail(u.Cause); d != "" {
		return what + " (" + d + ")"
	}
	return what
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
// never-runnable", then the queues the round left unread and why: "jobs
// wait unread: type sleep (QUEUED) busy, its lightest job needs 3 and the
// most room on a node is 2". It is "" when no job waits. The dispatcher
// logs it; the node runtime and the simulator may show it as it is.
func (s RoundStats) Summary() string {
	counted := s.countedSummary()
	if len(s.Unread) == 0 {
		return counted
	}
	unread := slices.Clone(s.Unread)
	slices.SortStableFunc(unread, func(a, b UnreadQueue) int {
		return engine.CompareQueues(engine.QueueLoads{Status: a.Status, Type: a.Type}, engine.QueueLoads{Status: b.Status, Type: b.Type})
	})
	parts := make([]string, len(unread))
	for i, u := range unread {
		parts[i] = s.unreadPart(u)
	}
	if counted == "" {
		return "jobs wait unread: " + strings.Join(parts, "; ")
	}
	return counted + "; queues not read: " + strings.Join(parts, "; ")
}

// countedSummary is Summary of the jobs the round read.
func (s RoundStats) countedSummary() string {
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

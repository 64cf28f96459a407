package engine

import (
	"fmt"
	"strings"
)

// Priorities order the queue: the dispatcher takes RESTART jobs first, then
// the higher priority, then the older job. A key keeps its own order
// whatever its jobs' priorities, so a job of higher priority never
// overtakes an earlier job of its key. The range is Nomad's: an operator
// who knows one knows the other.
const (
	MinPriority     = 1
	MaxPriority     = 100
	DefaultPriority = 50
)

// PriorityProblem says what is wrong with a priority, or "" when nothing
// is; 0 stands for the default.
func PriorityProblem(p int) string {
	if p != 0 && (p < MinPriority || p > MaxPriority) {
		return fmt.Sprintf("priority %d is not between %d and %d", p, MinPriority, MaxPriority)
	}
	return ""
}

// PriorityOr is p, or DefaultPriority when p is 0.
func PriorityOr(p int) int {
	if p == 0 {
		return DefaultPriority
	}
	return p
}

// QueuePlace is a job's place in its status's queue: higher priority
// first, then lower id. A page of the queue starts after the place of the
// last job of the page before.
type QueuePlace struct {
	Priority int
	ID       int64
}

// PlaceOf is j's place in its queue.
func PlaceOf(j *Job) QueuePlace { return QueuePlace{Priority: j.Priority, ID: j.ID} }

// Before reports whether place a comes before b in a queue.
func (a QueuePlace) Before(b QueuePlace) bool {
	return a.Priority > b.Priority || (a.Priority == b.Priority && a.ID < b.ID)
}

// CompareQueues orders queues as Store.JobQueueLoads lists them: RESTART
// before QUEUED, then by type.
func CompareQueues(a, b QueueLoads) int {
	if a.Status != b.Status {
		if a.Status == StatusRestart {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Type, b.Type)
}

// CheckDispatchable refuses a page of the queue no store can read: a
// status other than QUEUED or RESTART, no type, or a page of first
// children that does not start at the head of the queue.
func CheckDispatchable(p JobDispatchableParams) error {
	switch {
	case !p.Status.Dispatchable():
		return fmt.Errorf("list dispatchable jobs: status %q is neither QUEUED nor RESTART", p.Status)
	case p.Type == "":
		return fmt.Errorf("list dispatchable jobs: no type: a page is of one type's queue")
	case p.FirstChildren && p.After != QueuePlace{}:
		return fmt.Errorf("list dispatchable jobs: a page of first children starts at the head of the queue")
	}
	return nil
}

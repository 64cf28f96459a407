package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Status is the state of a job. A job is created QUEUED (or INSTANTIATED
// when held), is started by the node it is offered to (RUNNING, the start
// being the claim), and ends in one of the terminal states;
// allowedTransitions is the whole state machine.
type Status string

// The job states. Terminal states are FINISHED, WARNING, FAILED, CANCELLED and DELETED.
const (
	StatusInstantiated Status = "INSTANTIATED" // created held: not dispatched until released
	StatusQueued       Status = "QUEUED"
	StatusRestart      Status = "RESTART" // dispatched before QUEUED
	StatusRunning      Status = "RUNNING"
	StatusPaused       Status = "PAUSED"
	StatusWaiting      Status = "WAITING"    // a parent waiting for its children; holds no load
	StatusCancelling   Status = "CANCELLING" // the node is stopping it
	StatusFinished     Status = "FINISHED"
	StatusWarning      Status = "WARNING"
	StatusFailed       Status = "FAILED"
	StatusCancelled    Status = "CANCELLED"
	StatusDeleted      Status = "DELETED"
)

// AllStatuses lists every state in lifecycle order.
var AllStatuses = []Status{
	StatusInstantiated, StatusQueued, StatusRestart, StatusRunning, StatusPaused,
	StatusWaiting, StatusCancelling, StatusFinished, StatusWarning,
	StatusFailed, StatusCancelled, StatusDeleted,
}

// retiredDispatching is the state of a job handed to a node before it
// started, which older releases wrote. Nothing writes it now; ParseStatus
// names it apart so a script or an older node that sends it learns why
// it is refused.
const retiredDispatching Status = "DISPATCHING"

// ParseStatus reads a state name, case-insensitively.
func ParseStatus(s string) (Status, error) {
	st := Status(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(AllStatuses, st) {
		return st, nil
	}
	names := make([]string, len(AllStatuses))
	for i, a := range AllStatuses {
		names[i] = string(a)
	}
	if st == retiredDispatching {
		return "", fmt.Errorf("state %s is retired: a job is started straight from its queue, and migration 017 put any job left so back in it (valid: %s)",
			st, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown state %q (valid: %s)", s, strings.Join(names, ", "))
}

// The status sets every rule is written against, each defined once here;
// the SQL store renders the same sets into its queries.
var (
	// TerminalStatuses: no further work happens (requeue can bring the job back).
	TerminalStatuses = []Status{StatusFinished, StatusWarning, StatusFailed, StatusCancelled, StatusDeleted}
	// DispatchableStatuses may be placed by the dispatcher, RESTART first.
	DispatchableStatuses = []Status{StatusRestart, StatusQueued}
	// QueuedLikeStatuses have not been handed to a node yet.
	QueuedLikeStatuses = []Status{StatusInstantiated, StatusQueued, StatusRestart}
	// LoadHoldingStatuses count against their node's load. A PAUSED job
	// holds load only while it has a node (it was paused while running);
	// see Job.HoldsLoad.
	LoadHoldingStatuses = []Status{StatusRunning, StatusPaused, StatusCancelling}
	// NodeOwnedStatuses are those of a job a node has started and not
	// finished with: its run lives on that node.
	NodeOwnedStatuses = []Status{StatusRunning, StatusPaused, StatusCancelling, StatusWaiting}
	// RecoverableStatuses are the states of jobs a gone node leaves behind.
	RecoverableStatuses = []Status{StatusRunning, StatusPaused, StatusCancelling, StatusWaiting}
	// KeyActiveStatuses are those of a job that holds its key whatever its
	// place in the key's order: running, or waiting for children (and
	// PAUSED while it has a node; see Job.HoldsKey).
	KeyActiveStatuses = []Status{StatusRunning, StatusCancelling, StatusWaiting, StatusPaused}
	// WakingStatuses are those whose entry may let the dispatcher place
	// more work: a job became dispatchable, or it left a load-holding state
	// (ended, or waits for its children) and so freed its node's load and
	// perhaps its key. Every way out of a load-holding state leads here or
	// to PAUSED, and a paused job keeps its node's load and its key, so
	// PAUSED is not among them. A JobChangeNotifier reports these.
	WakingStatuses = []Status{StatusQueued, StatusRestart, StatusWaiting,
		StatusFinished, StatusWarning, StatusFailed, StatusCancelled, StatusDeleted}
)

// StatusSets names the sets for the SQL store's query templates.
var StatusSets = map[string][]Status{
	"terminal":     TerminalStatuses,
	"dispatchable": DispatchableStatuses,
	"queued_like":  QueuedLikeStatuses,
	"load_holding": LoadHoldingStatuses,
	"node_owned":   NodeOwnedStatuses,
	"recoverable":  RecoverableStatuses,
	"key_active":   KeyActiveStatuses,
	"waking":       WakingStatuses,
}

// Terminal reports whether no further work happens to a job in this state
// (requeue can still bring it back).
func (s Status) Terminal() bool { return slices.Contains(TerminalStatuses, s) }

// Succeeded reports whether a terminal state counts as success for `wait`.
func (s Status) Succeeded() bool { return s == StatusFinished || s == StatusWarning }

// Dispatchable reports whether the dispatcher may place a job in this state.
func (s Status) Dispatchable() bool { return slices.Contains(DispatchableStatuses, s) }

// QueuedLike reports whether a job in this state has not been handed to a node yet.
func (s Status) QueuedLike() bool { return slices.Contains(QueuedLikeStatuses, s) }

// NodeOwned reports whether a job in this state has a run on its node.
func (s Status) NodeOwned() bool { return slices.Contains(NodeOwnedStatuses, s) }

// Wakes reports whether a job entering this state may let the dispatcher
// place more work (see WakingStatuses).
func (s Status) Wakes() bool { return slices.Contains(WakingStatuses, s) }

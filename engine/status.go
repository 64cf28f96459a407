package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Status is the state of a job (DESIGN.md §2).
type Status string

// The job states. Terminal states are FINISHED, WARNING, FAILED, CANCELLED and DELETED.
const (
	StatusInstantiated Status = "INSTANTIATED" // created held: not dispatched until released
	StatusQueued       Status = "QUEUED"
	StatusRestart      Status = "RESTART" // dispatched before QUEUED
	StatusDispatching  Status = "DISPATCHING"
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
	StatusInstantiated, StatusQueued, StatusRestart, StatusDispatching, StatusRunning,
	StatusPaused, StatusWaiting, StatusCancelling, StatusFinished, StatusWarning,
	StatusFailed, StatusCancelled, StatusDeleted,
}

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
	return "", fmt.Errorf("unknown state %q (valid: %s)", s, strings.Join(names, ", "))
}

// Terminal reports whether no further work happens to a job in this state
// (requeue can still bring it back).
func (s Status) Terminal() bool {
	switch s {
	case StatusFinished, StatusWarning, StatusFailed, StatusCancelled, StatusDeleted:
		return true
	}
	return false
}

// Succeeded reports whether a terminal state counts as success for `wait`.
func (s Status) Succeeded() bool { return s == StatusFinished || s == StatusWarning }

// Dispatchable reports whether the dispatcher may place a job in this state.
func (s Status) Dispatchable() bool { return s == StatusQueued || s == StatusRestart }

// QueuedLike reports whether a job in this state has not been handed to a node yet.
func (s Status) QueuedLike() bool {
	return s == StatusInstantiated || s == StatusQueued || s == StatusRestart
}

// LoadHoldingStatuses are the states in which a job counts against its
// node's load. A PAUSED job holds load only while it has a node (it was
// paused while running); see Job.HoldsLoad.
var LoadHoldingStatuses = []Status{StatusDispatching, StatusRunning, StatusPaused, StatusCancelling}

package engine

import (
	"context"
	"fmt"
	"time"
)

// Attempt is one run of a job on a node: from its start until the job left
// the node (it finished, failed, was put back for a retry or because its
// node was lost, or was cancelled). Field names in JSON are the stable
// contract of the "attempts" array of `jobctl show -o json`.
//
// The store records an attempt when it ends, in the same write as the
// transition that ends it (EndsAttempt says which those are), so no caller
// makes an extra round trip for it. The SQL store leaves the attempt that
// ends a job for good on the job's row, which holds all of it, and keeps
// it apart only once the job moves on (migration 016); its readers list
// both, so where an attempt is kept does not show. The attempt running now is not stored;
// RunningAttempt makes it from the job.
type Attempt struct {
	JobID     int64      `json:"-"`
	Attempt   int        `json:"attempt"`
	Node      string     `json:"node"`
	StartedAt *time.Time `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"` // nil while it runs
	// ExitCode is the exit code its run reported; nil when it reported
	// none (a signal ended it, or it was cut short, or it still runs).
	ExitCode *int `json:"exit_code"`
	// Ending is the status the job went to when the attempt ended
	// (FINISHED, FAILED, RESTART, CANCELLED, …); empty while it runs.
	Ending Status `json:"ending"`
	// Message says how it ended, e.g. "exit code 3; retrying in 2s" or why
	// its node was given up on.
	Message string `json:"message"`
	// Usage is what the attempt used, as its node measured it; nil while
	// it runs and when it was not measured.
	Usage *Usage `json:"usage"`
	// Live is what its node last reported of the attempt running now
	// (Node.RunningUsage), for a reader that looked it up; never stored.
	Live *LiveUsage `json:"live,omitempty"`
}

// onNode reports whether j has a run on a node: a node-owned status, and
// for PAUSED a node too (a job paused in the queue never ran).
func onNode(j *Job) bool {
	if j.Status == StatusPaused {
		return j.Node != ""
	}
	return j.Status.NodeOwned()
}

// EndsAttempt reports whether the transition from before to after ends an
// attempt: the job had a run on a node and has one no longer. Moving
// between the node-owned states (RUNNING ↔ PAUSED, RUNNING ↔ WAITING,
// → CANCELLING) stays within one attempt. The SQL store's triggers on jobs
// (migration 009) are the copy of this rule, and the conformance suite
// holds them to it.
func EndsAttempt(before, after *Job) bool {
	return onNode(before) && !after.Status.NodeOwned()
}

// EndedAttempt is the attempt the transition from before to after ends, at
// endedAt (the store's clock). The node and start are the run's (a
// recovery clears the node); the exit code, ending and message are what
// the ending transition left on the job. A new attempt starts with no exit
// code and no usage (JobUpdate.IncrementAttempt clears them), so one that
// ends without reporting them records none.
func EndedAttempt(before, after *Job, endedAt time.Time) Attempt {
	a := Attempt{
		JobID: before.ID, Attempt: before.Attempt, Node: before.Node,
		EndedAt: Ptr(endedAt), Ending: after.Status, Message: after.Message,
	}
	if before.StartedAt != nil {
		a.StartedAt = Ptr(*before.StartedAt)
	}
	if after.ExitCode != nil {
		a.ExitCode = Ptr(*after.ExitCode)
	}
	if after.Usage != nil {
		a.Usage = Ptr(*after.Usage)
	}
	return a
}

// RunningAttempt is the attempt j runs now, with no end, or nil when j has
// no run on a node.
func RunningAttempt(j *Job) *Attempt {
	if !onNode(j) {
		return nil
	}
	a := &Attempt{JobID: j.ID, Attempt: j.Attempt, Node: j.Node}
	if j.StartedAt != nil {
		a.StartedAt = Ptr(*j.StartedAt)
	}
	return a
}

// JobAttempts reads job id and every attempt it made, the one running now
// last. An unknown id is a *NotFoundError. It needs no transaction (on
// SQLite one would queue for the write lock): the attempts are read after
// the job, so an attempt that ends in between is among them, and is then
// not added again as running.
func JobAttempts(ctx context.Context, s TxStore, id int64) (*Job, []Attempt, error) {
	job, err := s.JobGet(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	attempts, err := s.JobAttemptList(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("read the attempts of job %d: %w", id, err)
	}
	if a := RunningAttempt(job); a != nil && (len(attempts) == 0 || attempts[len(attempts)-1].Attempt < a.Attempt) {
		attempts = append(attempts, *a)
	}
	return job, attempts, nil
}

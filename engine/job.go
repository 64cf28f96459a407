package engine

import (
	"encoding/json"
	"slices"
	"time"
)

// DefaultJobTimeout is the global job timeout when neither the job nor its
// service sets one.
const DefaultJobTimeout = 8 * time.Hour

// Built-in job types.
const (
	TypeNoop     = "noop"
	TypeSleep    = "sleep"
	TypeExec     = "exec"
	TypeWorkflow = "workflow"
)

// Job is one unit of work. Field names in JSON are the stable contract of
// `jobctl show -o json`.
type Job struct {
	ID        int64           `json:"id"`
	Type      string          `json:"type"`
	Operation string          `json:"operation"`
	Args      []string        `json:"args"`
	Payload   json.RawMessage `json:"payload"`
	Load      float64         `json:"load"`
	// Priority orders the queue: higher first (MinPriority to MaxPriority).
	Priority    int      `json:"priority"`
	Status      Status   `json:"status"`
	Node        string   `json:"node"`
	Key         string   `json:"key"`
	ParentID    *int64   `json:"parent_id"`
	Attempt     int      `json:"attempt"`
	MaxAttempts int      `json:"max_attempts"` // attempts allowed since submit or the last requeue
	AttemptBase int      `json:"attempt_base"` // attempts made before the last requeue
	Backoff     Duration `json:"backoff"`
	Rollback    string   `json:"rollback"`
	// RollbackType is the type of the rollback job; "" is the job's own type.
	RollbackType string `json:"rollback_type"`
	// RollbackJobID is the rollback job created after the job's final
	// failure; RollbackOf, on a rollback job, the job it undoes.
	RollbackJobID *int64 `json:"rollback_job_id"`
	RollbackOf    *int64 `json:"rollback_of"`
	// KeyPosition is the job's place in its key's order; nil is its own
	// id (Job.KeyPlace).
	KeyPosition *int64 `json:"key_position"`
	// DoubleFault: the job's rollback job ended FAILED. It is derived, not
	// stored: MarkDoubleFaults fills it in from the rollback jobs.
	DoubleFault     bool       `json:"double_fault"`
	RunAfter        *time.Time `json:"run_after"`
	Timeout         Duration   `json:"timeout"`
	Progress        int        `json:"progress"`
	ProgressMessage string     `json:"progress_message"`
	ExitCode        *int       `json:"exit_code"`
	Message         string     `json:"message"` // why it is in its state, e.g. "timed out after 1m"
	// MemoryLimit is the most memory the job may hold, in bytes, on a
	// node that enforces limits (serve --enforce); 0: none of its own.
	MemoryLimit int64 `json:"memory_limit"`
	// Usage is what the job's last ended attempt used, as its node
	// measured it, until its next attempt starts (or it is requeued);
	// nil when that attempt was not measured (an in-process builtin, a run
	// cut short with its node) or none has ended.
	Usage   *Usage `json:"usage"`
	Version int64  `json:"version"`
	// Dispatcher and LeaseTerm name the lease holder, and its term, that
	// the current attempt was started under; empty before the first start.
	Dispatcher string     `json:"dispatcher"`
	LeaseTerm  int64      `json:"lease_term"`
	Creator    string     `json:"creator"`
	CreatedAt  time.Time  `json:"created_at"`
	QueuedAt   *time.Time `json:"queued_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// Waited, on a job as a start reads it back (Started), is how long it
	// waited for that start on the database's clock: from the time it was
	// due (Due) to StartedAt. It is not stored, and zero elsewhere.
	Waited time.Duration `json:"-"`
}

// AttemptsLeft is how many more runs the job may make before a failure is
// final. Attempt itself only ever grows (it fences off late results), so a
// requeue gives a fresh budget by moving AttemptBase up to it.
func (j *Job) AttemptsLeft() int { return j.MaxAttempts - (j.Attempt - j.AttemptBase) }

// Brief is the part of j a listing of jobs with JobListParams.Brief holds:
// ID, Type, Load, Status, Version, Node, Key, ParentID, Attempt, Priority,
// RunAfter and CreatedAt; Args is empty and every other field zero.
func (j *Job) Brief() *Job {
	b := &Job{ID: j.ID, Type: j.Type, Args: []string{}, Load: j.Load, Status: j.Status, Version: j.Version,
		Node: j.Node, Key: j.Key, Attempt: j.Attempt, Priority: j.Priority, CreatedAt: j.CreatedAt}
	if j.ParentID != nil {
		b.ParentID = Ptr(*j.ParentID)
	}
	if j.RunAfter != nil {
		b.RunAfter = Ptr(*j.RunAfter)
	}
	return b
}

// Queued is the part of j a dispatcher plans with and guards its claim by,
// as JobListDispatchable returns it: Brief without RunAfter and CreatedAt,
// which the page's query has already judged. Reading a page of the queue
// this way spares decoding what only the node that runs a job needs, and
// the two times, which took almost half of a page's decoding.
func (j *Job) Queued() *Job {
	q := j.Brief()
	q.RunAfter, q.CreatedAt = nil, time.Time{}
	return q
}

// Started is the part of j a node runs it by once it started it, as
// Store.JobStartMany returns it: ID, Type, Operation, Args, Payload, Load,
// Priority, Status, Node, Key, ParentID, Attempt, MaxAttempts, AttemptBase,
// Backoff, Timeout, MemoryLimit, Version, and how long it waited for the
// start (Waited); every other field zero. What a start clears (the last
// run's exit code and usage) or only an operator reads (progress,
// rollback, who made it, which lease started it, its times) is left out,
// and reading back a node's batch of starts spares encoding and decoding
// it. The view shares j's args, payload and parent id.
func (j *Job) Started() *Job {
	s := &Job{ID: j.ID, Type: j.Type, Operation: j.Operation, Args: j.Args, Payload: j.Payload, Load: j.Load,
		Priority: j.Priority, Status: j.Status, Node: j.Node, Key: j.Key, ParentID: j.ParentID,
		Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, AttemptBase: j.AttemptBase, Backoff: j.Backoff,
		Timeout: j.Timeout, MemoryLimit: j.MemoryLimit, Version: j.Version}
	if j.StartedAt != nil {
		s.Waited = j.StartedAt.Sub(j.Due())
	}
	return s
}

// Due is when j could first start: when it was queued (created, for a job
// never held), or its RunAfter when that is later.
func (j *Job) Due() time.Time {
	due := j.CreatedAt
	if j.QueuedAt != nil {
		due = *j.QueuedAt
	}
	if j.RunAfter != nil && j.RunAfter.After(due) {
		due = *j.RunAfter
	}
	return due
}

// HoldsLoad reports whether the job counts against its node's load now.
func (j *Job) HoldsLoad() bool {
	if j.Status == StatusPaused {
		return j.Node != ""
	}
	return slices.Contains(LoadHoldingStatuses, j.Status)
}

// KeepsNodeBusy is the rule of a drain: the job keeps its node from being
// drained while it holds load there, or is a parent there waiting for its
// children, whose process still runs.
func (j *Job) KeepsNodeBusy() bool {
	return j.HoldsLoad() || j.Status == StatusWaiting
}

// HoldsKey reports whether the job keeps every other job of its key from
// starting, wherever it stands in the key's order: it is on a node.
func (j *Job) HoldsKey() bool {
	if j.Status == StatusPaused {
		return j.Node != ""
	}
	return slices.Contains(KeyActiveStatuses, j.Status)
}

// Duration is a time.Duration that reads and writes as a Go duration string
// ("1h30m") in JSON, so operators see what they typed.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

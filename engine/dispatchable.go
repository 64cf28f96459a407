package engine

import (
	"fmt"
	"time"
)

// HoldKind says why a job is not dispatchable now.
type HoldKind string

// The reasons a job waits before any node is looked at.
const (
	HoldNone     HoldKind = ""          // dispatchable now
	HoldStatus   HoldKind = "status"    // not QUEUED or RESTART: held, paused, on a node, or ended
	HoldRunAfter HoldKind = "run-after" // its start time has not come
	HoldKey      HoldKind = "key"       // another job of its key goes first or is active
)

// Hold is the dispatchability of one job: the zero Hold means the
// dispatcher may place it now.
type Hold struct {
	Kind          HoldKind  `json:"kind"`
	Status        Status    `json:"status,omitempty"`     // HoldStatus: the job's status
	Until         time.Time `json:"until,omitzero"`       // HoldRunAfter: when it may start
	Key           string    `json:"key,omitempty"`        // HoldKey: the key
	BlockedBy     int64     `json:"blocked_by,omitempty"` // HoldKey: the job it waits behind
	BlockerStatus Status    `json:"blocker_status,omitempty"`
	BlockerType   string    `json:"blocker_type,omitempty"` // HoldKey: the type of the job it waits behind
	// RollbackPending (HoldKey): the job waited behind failed finally and
	// its rollback job is yet to be created.
	RollbackPending bool `json:"rollback_pending,omitempty"`
	// Children and ChildrenEnded: HoldStatus of a WAITING job, how many
	// children it waits for and how many of them have ended (set by
	// whoever reads them; DispatchHold does not).
	Children      int `json:"children,omitempty"`
	ChildrenEnded int `json:"children_ended,omitempty"`
}

// Dispatchable reports whether nothing holds the job back.
func (h Hold) Dispatchable() bool { return h.Kind == HoldNone }

// Reason is one line for an operator; now is the database clock.
func (h Hold) Reason(now time.Time) string {
	switch h.Kind {
	case HoldNone:
		return "dispatchable now"
	case HoldRunAfter:
		return fmt.Sprintf("starts in %s (run after %s)", h.Until.Sub(now).Round(time.Second), h.Until.UTC().Format(time.RFC3339))
	case HoldKey:
		if h.RollbackPending {
			return fmt.Sprintf("waiting for the rollback of job %d of key %q (%s)", h.BlockedBy, h.Key, h.BlockerStatus)
		}
		if root, ok := WorkflowKeyRoot(h.Key); ok {
			// A workflow's jobs share its key: a step waits for the
			// operation it judges, an operation for the step that made it.
			what := "operation"
			if h.BlockerType == TypeWorkflow {
				what = "step"
			}
			return fmt.Sprintf("waiting for %s %d of workflow %d to end (%s)", what, h.BlockedBy, root, h.BlockerStatus)
		}
		return fmt.Sprintf("waiting behind job %d of key %q (%s)", h.BlockedBy, h.Key, h.BlockerStatus)
	}
	switch {
	case h.Status == StatusInstantiated:
		return "held: created with --hold; 'jobctl release' lets it run"
	case h.Status == StatusPaused:
		return "paused: 'jobctl resume' lets it continue"
	case h.Status == StatusWaiting:
		// Its process runs on; it holds no load on its node until it runs again.
		return fmt.Sprintf("waiting for its children: %d of %d ended", h.ChildrenEnded, h.Children)
	case h.Status.Terminal():
		return fmt.Sprintf("ended %s: 'jobctl requeue' runs it again", h.Status)
	}
	return fmt.Sprintf("already handed to a node (%s)", h.Status)
}

// DispatchHold judges whether job may be dispatched at now (the database's
// clock), given the other jobs of its key (any order; the job itself and
// jobs of other keys are ignored). It is the rule; the SQL store's paging
// query is a faster copy of it, and the conformance suite proves the two
// agree.
//
// A key orders its jobs by place (Job.KeyBefore): submission order, with a
// rollback job right after the job it undoes. A job with a key waits while
// another job of that key is earlier and has not ended, so jobs of one key
// run one at a time in that order, or has failed finally and waits for its
// rollback job to be created (Job.RollbackPending), so the rollback runs
// before the key moves on. It also waits while another job of its key is
// active on a node whatever its place (Job.HoldsKey), so a requeued old job
// cannot run beside a later one.
func DispatchHold(job *Job, now time.Time, keyJobs []*Job) Hold {
	if !job.Status.Dispatchable() {
		return Hold{Kind: HoldStatus, Status: job.Status}
	}
	if job.RunAfter != nil && job.RunAfter.After(now) {
		return Hold{Kind: HoldRunAfter, Until: *job.RunAfter}
	}
	if job.Key == "" {
		return Hold{}
	}
	var blocker *Job
	for _, o := range keyJobs {
		if o.ID == job.ID || o.Key != job.Key {
			continue
		}
		active := o.HoldsKey()
		if !active && (!o.KeyBefore(job) || (o.Status.Terminal() && !o.RollbackPending())) {
			continue
		}
		// Name the active job first: it is what the key waits for now.
		if blocker == nil || (active && !blocker.HoldsKey()) || (active == blocker.HoldsKey() && o.KeyBefore(blocker)) {
			blocker = o
		}
	}
	if blocker != nil {
		return Hold{Kind: HoldKey, Key: job.Key, BlockedBy: blocker.ID, BlockerStatus: blocker.Status, BlockerType: blocker.Type,
			RollbackPending: blocker.RollbackPending()}
	}
	return Hold{}
}

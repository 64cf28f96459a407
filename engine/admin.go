package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Verb is an operator's action on a job: `jobctl cancel`,
// `pause`, `resume`, `requeue`, `release` and `delete`.
type Verb string

// The admin verbs.
const (
	VerbCancel  Verb = "cancel"
	VerbPause   Verb = "pause"
	VerbResume  Verb = "resume"
	VerbRequeue Verb = "requeue"
	VerbRelease Verb = "release"
	VerbDelete  Verb = "delete"
)

// Verbs lists every admin verb.
var Verbs = []Verb{VerbCancel, VerbPause, VerbResume, VerbRequeue, VerbRelease, VerbDelete}

// Messages the admin verbs leave on a job, saying why it is in its state.
const (
	MessageCancelled = "cancelled by operator"
	MessagePaused    = "paused by operator"
	MessageRequeued  = "requeued by operator"
)

// verbAttempts bounds how often ApplyVerb re-reads a job that keeps changing
// under it; a job that changes ten times in a row is being worked on so
// busily that the operator should look before trying again.
const verbAttempts = 10

// Update computes the guarded update that applies the verb to the job as it
// was read, or a *TransitionError saying why the verb does not apply now.
func (v Verb) Update(j *Job) (JobUpdate, error) {
	switch v {
	case VerbCancel:
		return CancelUpdate(j)
	case VerbPause:
		return PauseUpdate(j)
	case VerbResume:
		return ResumeUpdate(j)
	case VerbRequeue:
		return RequeueUpdate(j)
	case VerbRelease:
		return ReleaseUpdate(j)
	case VerbDelete:
		return DeleteUpdate(j)
	}
	return JobUpdate{}, fmt.Errorf("unknown verb %q", string(v))
}

// CancelUpdate stops a job. A job no node runs yet (held, queued, or
// paused before it started) ends CANCELLED at once; a job a
// node runs or holds (running, paused while running, waiting for its
// children) becomes CANCELLING, and its node stops the process and then
// records CANCELLED.
func CancelUpdate(j *Job) (JobUpdate, error) {
	u := guarded(j)
	u.Message = Ptr(MessageCancelled)
	switch {
	case j.Status.QueuedLike() || (j.Status == StatusPaused && j.Node == ""):
		u.To = StatusCancelled
		u.MarkFinished = true
	case j.Status == StatusRunning || j.Status == StatusPaused || j.Status == StatusWaiting:
		u.To = StatusCancelling
	case j.Status == StatusCancelling:
		return refuse(j, StatusCancelled, "it is already being cancelled")
	default:
		return refuse(j, StatusCancelled, "nothing to cancel")
	}
	return u, nil
}

// PauseUpdate holds a job. A queued job is held back from dispatch (PAUSED
// without a node); a running job keeps its node, which stops the process
// until it is resumed.
func PauseUpdate(j *Job) (JobUpdate, error) {
	u := guarded(j)
	u.To = StatusPaused
	u.Message = Ptr(MessagePaused)
	switch j.Status {
	case StatusQueued, StatusRestart:
		u.Node = Ptr("")
	case StatusRunning:
	case StatusInstantiated:
		return refuse(j, StatusPaused, "it is held already; release it to let it run")
	case StatusPaused:
		return refuse(j, StatusPaused, "it is paused already")
	case StatusWaiting:
		return refuse(j, StatusPaused, "it is waiting for its children; pause those instead")
	case StatusCancelling:
		return refuse(j, StatusPaused, "it is being cancelled")
	default:
		return refuse(j, StatusPaused, "nothing to pause")
	}
	return u, nil
}

// ResumeUpdate undoes a pause: a job paused before it ran goes back to the
// queue, a job paused while running continues on its node.
func ResumeUpdate(j *Job) (JobUpdate, error) {
	u := guarded(j)
	u.Message = Ptr("")
	switch {
	case j.Status == StatusPaused && j.Node == "":
		u.To = StatusQueued
		u.MarkQueued = true
	case j.Status == StatusPaused:
		u.To = StatusRunning
	case j.Status == StatusInstantiated:
		return refuse(j, StatusQueued, "it is held, not paused; release it instead")
	default:
		return refuse(j, StatusQueued, "it is not paused; nothing to resume")
	}
	return u, nil
}

// RequeueUpdate runs an ended job again: it goes to RESTART (dispatched
// before queued jobs) with its previous result cleared.
func RequeueUpdate(j *Job) (JobUpdate, error) {
	u := guarded(j)
	u.To = StatusRestart
	switch {
	case j.Status == StatusDeleted:
		return refuse(j, StatusRestart, "deleted jobs cannot be requeued; submit it again")
	case !j.Status.Terminal():
		return refuse(j, StatusRestart, "only ended jobs can be requeued; cancel it first")
	}
	u.Node = Ptr("")
	u.ClearResult = true
	u.RebaseAttempts = true // a fresh set of attempts
	u.Message = Ptr(MessageRequeued)
	return u, nil
}

// ReleaseUpdate lets a job created held (INSTANTIATED) be dispatched.
func ReleaseUpdate(j *Job) (JobUpdate, error) {
	u := guarded(j)
	u.To = StatusQueued
	switch j.Status {
	case StatusInstantiated:
		u.MarkQueued = true
		return u, nil
	case StatusPaused:
		return refuse(j, StatusQueued, "it is paused, not held; resume it instead")
	}
	return refuse(j, StatusQueued, "only held (INSTANTIATED) jobs can be released")
}

// DeleteUpdate marks an ended job DELETED; it stays in the store but leaves
// listings and retention may remove it.
func DeleteUpdate(j *Job) (JobUpdate, error) {
	u := guarded(j)
	u.To = StatusDeleted
	switch {
	case j.Status == StatusDeleted:
		return refuse(j, StatusDeleted, "it is deleted already")
	case !j.Status.Terminal():
		return refuse(j, StatusDeleted, "only ended jobs can be deleted; cancel it first")
	}
	return u, nil
}

// guarded starts an update that applies only to the job as it was read.
func guarded(j *Job) JobUpdate {
	return JobUpdate{ID: j.ID, From: j.Status, Version: j.Version}
}

func refuse(j *Job, to Status, reason string) (JobUpdate, error) {
	return JobUpdate{}, &TransitionError{ID: j.ID, From: j.Status, To: to, Reason: reason}
}

// VerbEvent says how the events of a verb applied for an operator read:
// the command that applied it ("cancel", "workflow cancel", "nodes
// drain"), and a note on why, beside each job's transition ("with workflow
// 12").
type VerbEvent struct {
	Verb string
	Note string
	// Priority, on a requeue, is the job's new priority (0 keeps its
	// own): the job goes back in line, where its priority counts. The
	// event names it.
	Priority int
}

// ApplyVerb applies an admin verb to job id for by: it reads the job,
// computes the guarded update and applies it together with its event (see
// Recorded), reading again and deciding anew when the job changed in
// between (a lost race is never overwritten). Cancelling a job also
// cancels its unfinished descendants in the same transaction, each with an
// event of its own; when some of them kept changing, ApplyVerb returns the
// cancelled job together with an error naming them (ErrChildrenLeft), and
// the lease holder's repair finishes them. A job the verb finds done already
// (AlreadyDone) is left as it is, and no event is recorded for it.
func ApplyVerb(ctx context.Context, store Transactor, id int64, verb Verb, by Actor) (*Job, error) {
	return ApplyVerbAs(ctx, store, id, verb, by, VerbEvent{Verb: string(verb)})
}

// ApplyVerbAs is ApplyVerb with events that read as ev says.
func ApplyVerbAs(ctx context.Context, store Transactor, id int64, verb Verb, by Actor, ev VerbEvent) (*Job, error) {
	if err := validateActor(by); err != nil {
		return nil, err
	}
	if ev.Priority != 0 && verb != VerbRequeue {
		return nil, fmt.Errorf("%s takes no priority; a priority is given on submit or requeue", verb)
	}
	j, left, err := applyOnce(ctx, store, id, verb, by, ev)
	if err != nil {
		return nil, err
	}
	if left != nil {
		return j, fmt.Errorf("job %d is %s, but not all its children were cancelled: %w", id, j.Status, left)
	}
	return j, nil
}

// recordTransition records the event of job j's move from status from;
// the engine's own changes (an Actor without Who) record none.
func recordTransition(ctx context.Context, tx TxStore, by Actor, ev VerbEvent, from Status, j *Job) error {
	if by.Who == "" {
		return nil
	}
	note := ev.Note
	if ev.Priority != 0 {
		note = strings.TrimPrefix(note+detailNoteSep+fmt.Sprintf("priority %d", ev.Priority), detailNoteSep)
	}
	return by.Record(ctx, tx, EventAppendParams{Verb: ev.Verb, JobIDs: []int64{j.ID},
		Detail: transitionDetail(from, j.Status, note)})
}

// applyOnce applies verb to job id, and, for a cancel, cancels its
// descendants in the same transaction (see cancelBelow): the ones that kept
// changing come back in left. A job cancelled already has its descendants
// looked at again, so repeating a cancel finishes a cascade cut short.
func applyOnce(ctx context.Context, store Transactor, id int64, verb Verb, by Actor, ev VerbEvent) (out *Job, left, err error) {
	for range verbAttempts {
		err = store.Tx(ctx, func(tx TxStore) error {
			out, left = nil, nil
			j, err := tx.JobGet(ctx, id)
			if err != nil {
				return err
			}
			out = j
			if !verb.AlreadyDone(j) {
				u, err := verb.Update(j)
				if err != nil {
					return err
				}
				if ev.Priority != 0 {
					u.Priority = Ptr(ev.Priority)
				}
				if out, err = tx.JobUpdate(ctx, u); err != nil {
					return err
				}
				if err := recordTransition(ctx, tx, by, ev, j.Status, out); err != nil {
					return err
				}
			}
			if verb != VerbCancel {
				return nil
			}
			left, err = cancelBelow(ctx, tx, []int64{id}, by, VerbEvent{Verb: ev.Verb})
			return err
		})
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return out, left, nil
	}
	return nil, nil, fmt.Errorf("job %d kept changing while it was being %s; try again: %w", id, verb.PastTense(), ErrConflict)
}

// AlreadyDone reports whether the job already is where the verb would take
// it, so applying the verb again is a no-op rather than an error: scripts
// can repeat a verb, and a job that ended between 'list' and 'cancel' needs
// no cancelling.
func (v Verb) AlreadyDone(j *Job) bool {
	switch v {
	case VerbCancel:
		return j.Status.Terminal() || j.Status == StatusCancelling
	case VerbPause:
		return j.Status == StatusPaused
	case VerbResume:
		return j.Status == StatusQueued || j.Status == StatusRestart || j.Status == StatusRunning
	case VerbRequeue:
		return j.Status == StatusRestart || j.Status == StatusQueued
	case VerbRelease:
		// A paused job is not held: 'resume' is what it needs, and saying
		// so beats a silent success.
		return j.Status != StatusInstantiated && j.Status != StatusPaused
	case VerbDelete:
		return j.Status == StatusDeleted
	}
	return false
}

// PastTense names what the verb does to a job, for messages ("cancelled").
func (v Verb) PastTense() string {
	switch v {
	case VerbCancel:
		return "cancelled"
	case VerbPause:
		return "paused"
	case VerbResume:
		return "resumed"
	case VerbRequeue:
		return "requeued"
	case VerbRelease:
		return "released"
	case VerbDelete:
		return "deleted"
	}
	return string(v)
}

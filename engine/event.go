package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Event is one change made to the cluster by an operator (a command or the
// dashboard) or by a job through its node: who made it, when on the
// database clock, what (the verb and what it names) and why. Every change
// a command makes is recorded in the transaction that makes it (see
// Recorded), so no change is kept without its event, and no event without
// its change. An event of a job goes when the job is pruned; the others
// go by age (EventPurge).
type Event struct {
	ID  int64     `json:"id"`
	At  time.Time `json:"at"`
	Who string    `json:"who"` // "alice@host1", or "job 42@n1" for a job's call through its node
	// Verb is the command that made the change, as typed after "jobctl":
	// "cancel", "nodes maintenance", "limits set" (the Event* constants,
	// and every admin Verb under its own name).
	Verb     string `json:"verb"`
	JobID    *int64 `json:"job_id"`
	Node     string `json:"node"`
	Type     string `json:"type"` // the job's type, or the type a limit is about
	Schedule string `json:"schedule"`
	Detail   string `json:"detail"` // what changed: "RUNNING → CANCELLING", "on", "max running 2"
	Reason   string `json:"reason"` // the operator's --reason; "" when none was given
}

// Verbs of the events that are not admin verbs on jobs (those record
// under their own name: string(VerbCancel) and so on).
const (
	EventSubmit           = "submit"
	EventNodesMaintenance = "nodes maintenance"
	EventNodesDrain       = "nodes drain"
	EventNodesRm          = "nodes rm"
	EventLimitsSet        = "limits set"
	EventLimitsRm         = "limits rm"
	EventSchedulesAdd     = "schedules add"
	EventSchedulesPause   = "schedules pause"
	EventSchedulesResume  = "schedules resume"
	EventSchedulesRm      = "schedules rm"
	EventWorkflowStart    = "workflow start"
	EventWorkflowCancel   = "workflow cancel"
	EventLeaseRelease     = "lease release"
	EventPrune            = "prune"
)

// Limits on an event's texts, within every backend's column: names as a
// job's (MaxNameLength characters), the detail and the reason within
// MySQL's TEXT.
const (
	MaxEventReason = 1000 // characters
	MaxEventDetail = 2000 // characters
)

// EventAppendParams are the events of one change.
type EventAppendParams struct {
	Who    string // required
	Reason string
	Verb   string // required
	// JobIDs makes one event per job, each naming the job and carrying its
	// type (Type is not used then); every job must exist. Without JobIDs
	// there is one event, naming no job.
	JobIDs   []int64
	Node     string
	Type     string
	Schedule string
	Detail   string
}

// EventListParams filter a listing of events; zero fields do not filter.
type EventListParams struct {
	JobID *int64
	Node  string
	// Since keeps the events at or after this time (database clock).
	Since *time.Time
	// AfterID keeps the events with a greater id.
	AfterID int64
	// Limit keeps the newest Limit of the matching events; 0: all.
	Limit int
}

// EventPurgeParams select events naming no job to remove: those of nodes,
// limits, schedules, the lease and prunes. Events of a job go with the job
// (JobPurge).
type EventPurgeParams struct {
	Before time.Time // events recorded before this (database clock)
	Limit  int       // at most this many, oldest first; 0: all
	DryRun bool      // count what would go, remove nothing
}

// ValidateEventAppend checks events before they are written, the same way
// in every store: who and the verb are required, every name follows the
// rules of a job's names, and the detail and the reason are text without
// control characters, within their limits. It returns an *InvalidError.
func ValidateEventAppend(p EventAppendParams) error {
	var problems []string
	name := func(field, v string, required bool) {
		if problem := NameProblem(field, v, required); problem != "" {
			problems = append(problems, problem)
		}
	}
	name("who", p.Who, true)
	name("verb", p.Verb, true)
	name("node", p.Node, false)
	name("type", p.Type, false)
	name("schedule", p.Schedule, false)
	if problem := TextProblem("detail", p.Detail, MaxEventDetail); problem != "" {
		problems = append(problems, problem)
	}
	if problem := ReasonProblem(p.Reason); problem != "" {
		problems = append(problems, problem)
	}
	for _, id := range p.JobIDs {
		if id <= 0 {
			problems = append(problems, fmt.Sprintf("job id %d is not a job id", id))
			break
		}
	}
	if len(problems) > 0 {
		return &InvalidError{What: "event", Problems: problems}
	}
	return nil
}

// ReasonProblem says what is wrong with an operator's --reason, or ""
// when nothing is; commands check it before they change anything.
func ReasonProblem(reason string) string {
	return TextProblem("reason", reason, MaxEventReason)
}

// TextProblem says what is wrong with a free text of at most limit
// characters shown in listings, or "" when nothing is: it must be UTF-8
// without control characters (a newline or a terminal escape would break
// a table's row).
func TextProblem(field, v string, limit int) string {
	switch {
	case !utf8.ValidString(v):
		return field + " is not valid UTF-8"
	case utf8.RuneCountInString(v) > limit:
		return fmt.Sprintf("%s is longer than %d characters", field, limit)
	case strings.ContainsFunc(v, unicode.IsControl):
		return field + " contains control characters (a newline, a tab)"
	}
	return ""
}

// Actor is who makes a change and why: what the change's event records.
type Actor struct {
	Who    string // "alice@host1", or "job 42@n1" for a job through its node
	Reason string // optional
}

// Record appends the events of a change by a inside tx, the transaction
// that makes the change; e.Who and e.Reason are a's.
func (a Actor) Record(ctx context.Context, tx TxStore, e EventAppendParams) error {
	e.Who, e.Reason = a.Who, a.Reason
	return tx.EventAppend(ctx, e)
}

// ErrNoChange is what a change given to Recorded returns when it finds
// nothing to change (a schedule resumed that is not paused): Recorded then
// records nothing and returns nil.
var ErrNoChange = errors.New("nothing to change")

// Recorded makes a change and records its event in one transaction, so
// neither is kept without the other: change runs in the transaction and
// may complete e with what only it learns (the id of a job it created);
// then e is appended for by. An error from change, or from the append,
// keeps nothing. Like every Store.Tx callback, change may run again, so it
// must have no other side effects.
//
// Recording a new kind of change is this one call around the store calls
// that make it.
func Recorded(ctx context.Context, s Transactor, by Actor, e EventAppendParams, change func(tx TxStore, e *EventAppendParams) error) error {
	if err := validateActor(by); err != nil {
		return err
	}
	err := s.Tx(ctx, func(tx TxStore) error {
		ev := e
		ev.JobIDs = append([]int64(nil), e.JobIDs...)
		if err := change(tx, &ev); err != nil {
			return err
		}
		return by.Record(ctx, tx, ev)
	})
	if errors.Is(err, ErrNoChange) {
		return nil
	}
	return err
}

// validateActor refuses, before anything is changed, an actor whose
// event the store would refuse.
func validateActor(by Actor) error {
	return ValidateEventAppend(EventAppendParams{Who: by.Who, Reason: by.Reason, Verb: "check"})
}

// EndedBy is the event that says who ended job j as it is now, or nil: the
// job's last event, when that event took it where it is: to CANCELLING or
// CANCELLED (a cancel of the job itself, of an ancestor, of its workflow,
// or at a drain's deadline) for a job CANCELLING or CANCELLED now, or to
// DELETED for a deleted one. events are the job's own, oldest first.
func EndedBy(j *Job, events []Event) *Event {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.JobID == nil || *e.JobID != j.ID {
			continue
		}
		if to, ok := transitionTo(e.Detail); ok && endedAs(to) != "" && endedAs(to) == endedAs(j.Status) {
			return &e
		}
		return nil
	}
	return nil
}

// endedAs names the ending a status is the work of an operator's: a cancel
// or a delete; "" for any other status.
func endedAs(st Status) string {
	switch st {
	case StatusCancelling, StatusCancelled:
		return "cancelled"
	case StatusDeleted:
		return "deleted"
	}
	return ""
}

// EndedText says who ended a job, from the event EndedBy found: "cancelled
// by alice@host1 (with job 41): disk full".
func EndedText(e *Event) string {
	to, _ := transitionTo(e.Detail)
	s := endedAs(to) + " by " + e.Who
	if _, note, ok := strings.Cut(e.Detail, detailNoteSep); ok {
		s += " (" + note + ")"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// detailNoteSep parts a job verb's transition from a note on why it was
// made: "RUNNING → CANCELLING; with its parent 41".
const detailNoteSep = "; "

// transitionDetail is the detail of an admin verb's event: the status the
// job went from and to, and the note, if any.
func transitionDetail(from, to Status, note string) string {
	s := string(from) + " → " + string(to)
	if note != "" {
		s += detailNoteSep + note
	}
	return s
}

// transitionTo reads the status a job went to from the detail
// transitionDetail wrote.
func transitionTo(detail string) (Status, bool) {
	detail, _, _ = strings.Cut(detail, detailNoteSep)
	_, to, ok := strings.Cut(detail, " → ")
	if !ok {
		return "", false
	}
	st, err := ParseStatus(to)
	return st, err == nil
}

package engine

import (
	"encoding/json"
	"fmt"
	"time"
)

// ScheduleOverlap decides whether a schedule's fire creates a job while
// the job of its last fire has not ended yet.
type ScheduleOverlap string

// Overlap policies.
const (
	// OverlapSkip creates nothing while the last job is unfinished: the
	// fire time passes (the next one is set) and the skip is logged.
	OverlapSkip ScheduleOverlap = "skip"
	// OverlapAllow creates a job at every fire, whatever the last one does.
	OverlapAllow ScheduleOverlap = "allow"
)

// ScheduleCreatorPrefix starts the creator of every job a schedule
// creates, followed by the schedule's name, so its jobs can be told apart.
const ScheduleCreatorPrefix = "schedule:"

// MaxScheduleName is the longest schedule name, in characters: the
// creator of its jobs (ScheduleCreatorPrefix + name) must fit a creator.
const MaxScheduleName = MaxNameLength - len(ScheduleCreatorPrefix)

// Schedule is a named cron expression plus a job template: each time the
// expression names, the lease holder creates a job from the template.
// Field names in JSON are the stable contract of `jobctl schedules show
// -o json`.
type Schedule struct {
	Name    string          `json:"name"`
	Cron    string          `json:"cron"` // as given: five fields, or a descriptor such as @hourly or @every 5m
	TZ      string          `json:"tz"`   // IANA zone the cron fields are read in
	Overlap ScheduleOverlap `json:"overlap"`
	Paused  bool            `json:"paused"`
	Job     JobTemplate     `json:"job"`
	// NextFireAt is when the schedule fires next, on the database clock;
	// it moves on in the transaction that creates the fire's job.
	NextFireAt time.Time `json:"next_fire_at"`
	// LastJobID is the job the latest fire created; nil before the first.
	LastJobID *int64    `json:"last_job_id"`
	Creator   string    `json:"creator"` // who added the schedule
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// JobCreator is the creator recorded on the jobs the schedule creates.
func (s *Schedule) JobCreator() string { return ScheduleCreatorPrefix + s.Name }

// JobTemplate is the job a schedule creates at each fire, as a submit
// would ask for it. A nil Load or Timeout takes the service's setting at
// the time of the fire, as a submit without them does.
type JobTemplate struct {
	Type      string          `json:"type"`
	Operation string          `json:"operation"`
	Args      []string        `json:"args"`
	Payload   json.RawMessage `json:"payload"`
	Load      *float64        `json:"load"`
	Key       string          `json:"key"`
	// Priority is each job's (0: the default); templates stored before
	// priorities read as 0.
	Priority    int       `json:"priority,omitempty"`
	MaxAttempts int       `json:"max_attempts"`
	Backoff     Duration  `json:"backoff"`
	Timeout     *Duration `json:"timeout"`
	// Memory is each job's memory limit in bytes (submit --memory); nil:
	// the service's, else none. Templates stored before it existed read
	// as nil.
	Memory *int64 `json:"memory,omitempty"`
	// Rollback and RollbackType are each job's rollback, as submit takes
	// them; templates stored before they existed read as none.
	Rollback     string `json:"rollback,omitempty"`
	RollbackType string `json:"rollback_type,omitempty"`
}

// Request is the submit a fire of the template makes, for creator.
func (t JobTemplate) Request(creator string) SubmitRequest {
	r := SubmitRequest{
		Type: t.Type, Operation: t.Operation, Args: t.Args, Payload: t.Payload, Load: t.Load, Key: t.Key,
		Priority: t.Priority, MaxAttempts: t.MaxAttempts, Backoff: time.Duration(t.Backoff), Rollback: t.Rollback, RollbackType: t.RollbackType,
		Creator: creator, MemoryLimit: t.Memory,
	}
	if t.Timeout != nil {
		r.Timeout = Ptr(time.Duration(*t.Timeout))
	}
	return r
}

// ScheduleAddParams are a new schedule. The caller computes NextFireAt
// from the cron expression (engine/schedule); the store only keeps it.
type ScheduleAddParams struct {
	Name       string
	Cron       string
	TZ         string
	Overlap    ScheduleOverlap
	Paused     bool
	Job        JobTemplate
	NextFireAt time.Time
	Creator    string
}

// ScheduleSetPausedParams pause or resume a schedule. NextFireAt, when not
// zero, becomes the next fire time (a resume sets the first one after now,
// so fires that fell in the pause are not made up).
type ScheduleSetPausedParams struct {
	Name       string
	Paused     bool
	NextFireAt time.Time
}

// ScheduleAdvanceParams move a schedule past one fire. The change applies
// only while the schedule is not paused and still has From as its next
// fire time, so of two lease holders firing the same time one wins.
type ScheduleAdvanceParams struct {
	Name      string
	From      time.Time // the next fire time the firing read
	Next      time.Time // the fire time after it
	LastJobID *int64    // the job this fire created; nil leaves the last one
}

// ScheduleDueParams select the schedules due to fire.
type ScheduleDueParams struct {
	Limit int // 0: all
}

// ValidateScheduleAdd checks a new schedule's fields, its template as
// Submit would check the job, and returns an *InvalidError naming each
// problem. The cron expression and zone are checked where they are parsed
// (engine/schedule); here only that they are given.
func ValidateScheduleAdd(p ScheduleAddParams) error {
	var problems []string
	if problem := NameProblem("schedule name", p.Name, true); problem != "" {
		problems = append(problems, problem)
	} else if len([]rune(p.Name)) > MaxScheduleName {
		problems = append(problems, fmt.Sprintf("schedule name is longer than %d characters", MaxScheduleName))
	}
	if problem := NameProblem("cron expression", p.Cron, true); problem != "" {
		problems = append(problems, problem)
	}
	if problem := NameProblem("time zone", p.TZ, true); problem != "" {
		problems = append(problems, problem)
	}
	if problem := NameProblem("creator", p.Creator, false); problem != "" {
		problems = append(problems, problem)
	}
	if p.Overlap != OverlapSkip && p.Overlap != OverlapAllow {
		problems = append(problems, fmt.Sprintf("overlap %q is neither %s nor %s", p.Overlap, OverlapSkip, OverlapAllow))
	}
	if p.NextFireAt.IsZero() {
		problems = append(problems, "no next fire time")
	}
	if _, _, err := submitParams(nil, p.Job.Request(ScheduleCreatorPrefix+p.Name)); err != nil {
		if inv, ok := err.(*InvalidError); ok {
			problems = append(problems, inv.Problems...)
		} else {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return &InvalidError{What: "schedule", Problems: problems}
	}
	return nil
}

// ScheduleExistsError is a ScheduleAdd of a name already taken; it
// matches ErrConflict.
type ScheduleExistsError struct{ Name string }

func (e *ScheduleExistsError) Error() string {
	return fmt.Sprintf("a schedule named %s exists already; remove it first with 'jobctl schedules rm %s'", e.Name, e.Name)
}

// Is lets errors.Is(err, ErrConflict) match.
func (e *ScheduleExistsError) Is(target error) bool { return target == ErrConflict }

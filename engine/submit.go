package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalid matches every *InvalidError with errors.Is.
var ErrInvalid = errors.New("invalid")

// InvalidError is input the engine refuses; nothing was written.
type InvalidError struct {
	What     string   // "job"
	Problems []string // each one clause: "load -1 is negative"
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("invalid %s: %s", e.What, strings.Join(e.Problems, "; "))
}

// Is lets errors.Is(err, ErrInvalid) match.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// ValidateJobInsert checks every field of a new job against the limits
// above and returns an *InvalidError naming each problem. Every store calls
// it before it writes anything, so a job is refused the same way whatever
// the backend.
func ValidateJobInsert(p JobInsertParams) error {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	name := func(field, v string, required bool) {
		if problem := NameProblem(field, v, required); problem != "" {
			problems = append(problems, problem)
		}
	}
	name("type", p.Type, true)
	name("operation", p.Operation, false)
	name("key", p.Key, false)
	name("creator", p.Creator, false)
	if problem := PriorityProblem(p.Priority); problem != "" {
		problems = append(problems, problem)
	}
	switch {
	case math.IsNaN(p.Load) || math.IsInf(p.Load, 0) || p.Load < 0:
		bad("load %v is not a number >= 0", p.Load)
	case p.Load > MaxJobLoad:
		bad("load %v is above %g", p.Load, MaxJobLoad)
	}
	if p.Status != StatusQueued && p.Status != StatusInstantiated {
		bad("status %q is neither QUEUED nor INSTANTIATED", p.Status)
	}
	if p.MaxAttempts < 0 || p.MaxAttempts > MaxAttemptsLimit {
		bad("max attempts %d is not between 1 and %d", p.MaxAttempts, MaxAttemptsLimit)
	}
	if p.Backoff < 0 || p.Backoff > MaxJobBackoff {
		bad("backoff %s is not between 0 and %s", p.Backoff, MaxJobBackoff)
	}
	if p.Timeout < 0 || p.Timeout > MaxJobTimeout {
		bad("timeout %s is not between 0 and %s", p.Timeout, MaxJobTimeout)
	}
	if p.MemoryLimit != 0 && (p.MemoryLimit < MinMemoryLimit || p.MemoryLimit > MaxMemoryLimit) {
		bad("memory limit %s is not between %s and %s (or 0 for none)", FormatSize(p.MemoryLimit),
			FormatSize(MinMemoryLimit), FormatSize(MaxMemoryLimit))
	}
	if p.ParentID != nil && *p.ParentID <= 0 {
		bad("parent id %d is not a job id", *p.ParentID)
	}
	if p.RunAfter != nil && (p.RunAfter.Year() < 1970 || p.RunAfter.Year() > latestRunAfterYear) {
		bad("start time %s is out of range", p.RunAfter.Format(time.RFC3339))
	}
	if len(p.Args) > MaxArgs {
		bad("%d args are more than %d", len(p.Args), MaxArgs)
	}
	argsSize := 2
	for _, a := range p.Args {
		if !utf8.ValidString(a) || strings.ContainsRune(a, 0) {
			bad("argument %q is not valid UTF-8 text", a)
			break
		}
		argsSize += len(a) + 3
	}
	if argsSize > MaxArgsBytes {
		bad("args are larger than %d bytes", MaxArgsBytes)
	}
	if payload := strings.TrimSpace(string(p.Payload)); payload != "" {
		switch {
		case len(payload) > MaxPayloadBytes:
			bad("payload is larger than %d bytes", MaxPayloadBytes)
		case !json.Valid([]byte(payload)):
			bad("payload is not valid JSON")
		case !utf8.ValidString(payload):
			// encoding/json lets invalid UTF-8 through inside strings;
			// no backend's text column takes it.
			bad("payload is not valid UTF-8")
		case strings.Contains(payload, `\u0000`):
			bad("payload contains a NUL character")
		}
	}
	if len(p.Rollback) > MaxRollbackBytes || !utf8.ValidString(p.Rollback) || strings.ContainsRune(p.Rollback, 0) {
		bad("rollback is not UTF-8 text of at most %d bytes", MaxRollbackBytes)
	}
	problems = append(problems, rollbackProblems(p)...)
	if len(problems) > 0 {
		return &InvalidError{What: "job", Problems: problems}
	}
	return nil
}

// SubmitRequest is a job as an operator or a job asks for it; unset
// optional fields take the defaults Submit documents.
type SubmitRequest struct {
	Type      string
	Operation string
	Args      []string
	Payload   json.RawMessage
	Load      *float64       // nil: the service's configured load, else 1
	Priority  int            // 0: the parent's priority for a child, else DefaultPriority
	Timeout   *time.Duration // nil: the service's configured timeout, else DefaultJobTimeout
	// MemoryLimit in bytes; nil: the service's configured memory limit,
	// else none.
	MemoryLimit *int64
	Hold        bool // created INSTANTIATED, until released
	Key         string
	ParentID    *int64
	MaxAttempts int // 0 means 1
	Backoff     time.Duration
	Rollback    string
	// RollbackType is the rollback job's type; "" is the job's own.
	RollbackType string
	RunAt        *time.Time     // not before this time
	RunIn        *time.Duration // not before this long from now on the database clock
	Creator      string
	// Check, when set, is shown the job as it would be inserted, its
	// defaults filled in and valid, before anything is written; an error
	// from it refuses the job.
	Check func(*JobInsertParams) error
}

// Submitted is a job Submit created.
type Submitted struct {
	Job *Job
	// Offered reports whether any registered node offers the job's type;
	// when none does, the job waits until one registers.
	Offered bool
}

// Submit creates a job: it fills in the defaults from the settings the
// nodes give the job's type (load, timeout, memory limit: an ONLINE node's first, else
// any registered node's), validates every field, checks the parent (it must
// exist and not have ended), and inserts the job. Nothing is written when
// any check fails; an invalid field is an *InvalidError.
//
// Run it inside Store.Tx to create the job atomically with other changes.
func Submit(ctx context.Context, s TxStore, nodes []*Node, r SubmitRequest) (Submitted, error) {
	p, offered, err := submitParams(nodes, r)
	if err != nil {
		return Submitted{}, err
	}
	if r.ParentID != nil {
		parent, err := checkParent(ctx, s, *r.ParentID)
		if err != nil {
			return Submitted{}, err
		}
		p.Priority = inherit(r.Priority, parent)
	}
	if r.RunIn != nil {
		// Every node judges run_after on the database's clock, so the
		// delay counts from that clock too, not from this machine's.
		now, err := s.Now(ctx)
		if err != nil {
			return Submitted{}, err
		}
		at := now.Add(*r.RunIn)
		p.RunAfter = &at
	}
	job, err := s.JobInsert(ctx, p)
	if err != nil {
		return Submitted{}, err
	}
	return Submitted{Job: job, Offered: offered}, nil
}

// SubmitStore is what SubmitOne and SubmitMany need of a store.
type SubmitStore interface {
	Transactor
	Now(ctx context.Context) (time.Time, error)
	JobGet(ctx context.Context, id int64) (*Job, error)
	JobSubmit(ctx context.Context, p JobSubmitParams) (JobSubmitted, error)
}

// JobGetter reads one job (TxStore.JobGet), in a transaction or not.
type JobGetter interface {
	JobGet(ctx context.Context, id int64) (*Job, error)
}

// SubmitOne creates a job as SubmitRecorded does, for a caller that has
// not read the nodes (a command): the store picks the service's load,
// timeout and memory limit in the very statement that inserts the job
// (Store.JobSubmit), records the submit's event for by with it, and counts
// a delay (RunIn) from the database clock there too, so a plain submit
// costs the database one statement (a transaction of two or three where
// an INSERT cannot carry another). A caller that read the nodes to judge
// the job before anything is written (r.Check) passes them, and the
// defaults come from them as Submit takes them; r.Check needs them. A
// parent is read first and checked as Submit checks it, and a child that
// asks for no priority takes its parent's. Nothing is written when any
// check fails; an invalid field is an *InvalidError.
func SubmitOne(ctx context.Context, s SubmitStore, nodes []*Node, r SubmitRequest, by Actor) (JobSubmitted, error) {
	if err := validateActor(by); err != nil {
		return JobSubmitted{}, err
	}
	if r.Check != nil && nodes == nil {
		return JobSubmitted{}, errors.New("submit: a check of the job needs the nodes")
	}
	p, _, err := submitParams(nodes, r)
	if err != nil {
		return JobSubmitted{}, err
	}
	if r.ParentID != nil {
		parent, err := checkParent(ctx, s, *r.ParentID)
		if err != nil {
			return JobSubmitted{}, err
		}
		p.Priority = inherit(r.Priority, parent)
	}
	fromStore := nodes == nil
	return s.JobSubmit(ctx, JobSubmitParams{
		JobInsertParams: p,
		ServiceLoad:     fromStore && r.Load == nil,
		ServiceTimeout:  fromStore && r.Timeout == nil,
		ServiceMemory:   fromStore && r.MemoryLimit == nil,
		RunIn:           r.RunIn,
		Event: EventAppendParams{Who: by.Who, Reason: by.Reason, Verb: EventSubmit,
			Detail: submitDetail(p.Status, p.ParentID)},
	})
}

// SubmitRecorded is Submit for by, an operator or a job through its node,
// with the submit's event in the same transaction.
func SubmitRecorded(ctx context.Context, s Transactor, nodes []*Node, r SubmitRequest, by Actor) (Submitted, error) {
	var sub Submitted
	err := Recorded(ctx, s, by, EventAppendParams{Verb: EventSubmit}, func(tx TxStore, e *EventAppendParams) error {
		var err error
		if sub, err = Submit(ctx, tx, nodes, r); err != nil {
			return err
		}
		e.JobIDs, e.Detail = []int64{sub.Job.ID}, submitDetail(sub.Job.Status, sub.Job.ParentID)
		return nil
	})
	return sub, err
}

// submitDetail is the detail of a submit's event: how the job starts out.
func submitDetail(status Status, parentID *int64) string {
	s := string(status)
	if parentID != nil {
		s += fmt.Sprintf(", child of %d", *parentID)
	}
	return s
}

// submitParams turns a request into the job to insert, with the defaults
// Submit documents, and validates it; offered reports whether a
// registered node offers its type.
func submitParams(nodes []*Node, r SubmitRequest) (p JobInsertParams, offered bool, err error) {
	p = JobInsertParams{
		Type: strings.TrimSpace(r.Type), Operation: r.Operation, Args: r.Args, Payload: r.Payload,
		Priority: r.Priority, Status: StatusQueued, Key: r.Key, ParentID: r.ParentID, MaxAttempts: max(r.MaxAttempts, 1),
		Backoff: r.Backoff, Rollback: r.Rollback, RollbackType: strings.TrimSpace(r.RollbackType), RunAfter: r.RunAt, Creator: r.Creator,
	}
	if r.MaxAttempts < 0 {
		p.MaxAttempts = r.MaxAttempts // refused by validation
	}
	if r.Hold {
		p.Status = StatusInstantiated
	}
	svc, offered := ServiceDefaults(nodes, p.Type)
	p.Load, p.Timeout, p.MemoryLimit = svc.Settings(r.Load, r.Timeout, r.MemoryLimit)
	if r.RunAt != nil && r.RunIn != nil {
		return p, false, &InvalidError{What: "job", Problems: []string{"both a start time and a delay are given"}}
	}
	if r.RunIn != nil && *r.RunIn < 0 {
		return p, false, &InvalidError{What: "job", Problems: []string{fmt.Sprintf("delay %s is negative", *r.RunIn)}}
	}
	// A workflow's jobs carry its spec and its place in it, which only
	// 'jobctl workflow start' and the workflow's own steps write.
	if p.Type == TypeWorkflow || p.RollbackType == TypeWorkflow {
		return p, false, &InvalidError{What: "job", Problems: []string{
			"type workflow is for the steps of a workflow: start one with 'jobctl workflow start FILE'"}}
	}
	if err := ValidateJobInsert(p); err != nil {
		return p, false, err
	}
	if r.Check != nil {
		if err := r.Check(&p); err != nil {
			return p, false, err
		}
	}
	return p, offered, nil
}

// checkParent returns the parent, refusing one that does not exist or has
// ended.
func checkParent(ctx context.Context, s JobGetter, id int64) (*Job, error) {
	parent, err := s.JobGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("parent: %w", err)
	}
	if parent.Status.Terminal() {
		return nil, &InvalidError{What: "job", Problems: []string{
			fmt.Sprintf("parent job %d has ended (%s); a child belongs to an unfinished job", parent.ID, parent.Status)}}
	}
	return parent, nil
}

// inherit is a child's priority: the one asked for, else its parent's, so
// the work an urgent job fans out is urgent too.
func inherit(asked int, parent *Job) int {
	if asked != 0 {
		return asked
	}
	return parent.Priority
}

// SubmitChunk is how many jobs SubmitMany inserts in one transaction.
const SubmitChunk = 1000

// SubmittedMany are the jobs SubmitMany created.
type SubmittedMany struct {
	IDs []int64 // in the order of the requests
	// Unoffered lists, sorted, the job types of the batch that no
	// registered node offers; those jobs wait until one registers.
	Unoffered []string
}

// BatchError is why one request of a batch was refused, with its index.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("job at index %d: %v", e.Index, e.Err) }

func (e *BatchError) Unwrap() error { return e.Err }

// SubmitMany creates many jobs, each with the defaults and checks Submit
// gives one. Every request is checked, its parent included, before any job
// is inserted: the first refused is a *BatchError with its index around
// the error Submit would give, and nothing is written. The jobs then go in
// one JobInsertMany (one transaction) per SubmitChunk of them, so a long
// batch never holds a writer's lock for long; should the database fail
// part-way, the ids of the chunks already in are returned with the error.
// A delay (RunIn) counts from one reading of the database clock for the
// whole batch. Each chunk's jobs are recorded for by, one submit event a
// job, in the chunk's transaction.
func SubmitMany(ctx context.Context, s SubmitStore, nodes []*Node, rs []SubmitRequest, by Actor) (SubmittedMany, error) {
	if err := validateActor(by); err != nil {
		return SubmittedMany{}, err
	}
	ps := make([]JobInsertParams, len(rs))
	unoffered := map[string]bool{}
	type checked struct {
		parent *Job
		err    error
	}
	parents := map[int64]checked{}
	var now time.Time
	for i, r := range rs {
		p, offered, err := submitParams(nodes, r)
		if err != nil {
			return SubmittedMany{}, &BatchError{Index: i, Err: err}
		}
		if !offered {
			unoffered[p.Type] = true
		}
		if r.ParentID != nil {
			c, seen := parents[*r.ParentID]
			if !seen {
				c.parent, c.err = checkParent(ctx, s, *r.ParentID)
				parents[*r.ParentID] = c
			}
			if c.err != nil {
				return SubmittedMany{}, &BatchError{Index: i, Err: c.err}
			}
			p.Priority = inherit(r.Priority, c.parent)
		}
		if r.RunIn != nil {
			if now.IsZero() {
				if now, err = s.Now(ctx); err != nil {
					return SubmittedMany{}, err
				}
			}
			at := now.Add(*r.RunIn)
			p.RunAfter = &at
		}
		ps[i] = p
	}
	out := SubmittedMany{IDs: make([]int64, 0, len(ps)), Unoffered: slices.Sorted(maps.Keys(unoffered))}
	for chunk := range slices.Chunk(ps, SubmitChunk) {
		var ids []int64
		err := s.Tx(ctx, func(tx TxStore) error {
			var err error
			if ids, err = tx.JobInsertMany(ctx, chunk); err != nil {
				return err
			}
			return by.Record(ctx, tx, EventAppendParams{Verb: EventSubmit, JobIDs: ids, Detail: fmt.Sprintf("one of a batch of %d", len(ps))})
		})
		if err != nil {
			return out, fmt.Errorf("insert jobs %d to %d of %d: %w", len(out.IDs)+1, len(out.IDs)+len(chunk), len(ps), err)
		}
		out.IDs = append(out.IDs, ids...)
	}
	return out, nil
}

// SubmitDefaults is what Store.JobSubmit makes of p with the nodes as
// they are, for a store that reads them in Go: the job to insert, the
// service's settings in place where p asks for them, and what the nodes
// offer its type (the result without its ID).
func SubmitDefaults(nodes []*Node, p JobSubmitParams) (JobInsertParams, JobSubmitted) {
	svc, offered := ServiceDefaults(nodes, p.Type)
	ip := p.JobInsertParams
	load, timeout, memory := &ip.Load, &ip.Timeout, &ip.MemoryLimit
	if p.ServiceLoad && svc.Load > 0 {
		load = nil
	}
	if p.ServiceTimeout && svc.Timeout > 0 {
		timeout = nil
	}
	if p.ServiceMemory && svc.Memory > 0 {
		memory = nil
	}
	ip.Load, ip.Timeout, ip.MemoryLimit = svc.Settings(load, timeout, memory)
	out := JobSubmitted{Load: ip.Load, Offered: offered}
	for _, n := range nodes {
		if n.State == NodeOnline && n.Offers(p.Type) {
			if !out.OnlineOffered || n.MaxLoad > out.LargestMaxLoad {
				out.LargestMaxLoad = n.MaxLoad
			}
			out.OnlineOffered = true
		}
	}
	return ip, out
}

// Settings is the one rule for a job's load, timeout and memory limit:
// each is the one the job asks for (non-nil), else the service's where it
// sets one, else the default (a load of 1, DefaultJobTimeout, no memory
// limit of its own). A submit and a workflow's operations both take it.
func (svc NodeService) Settings(load *float64, timeout *time.Duration, memory *int64) (float64, time.Duration, int64) {
	l, t, m := 1.0, DefaultJobTimeout, int64(0)
	switch {
	case load != nil:
		l = *load
	case svc.Load > 0:
		l = svc.Load
	}
	switch {
	case timeout != nil:
		t = *timeout
	case svc.Timeout > 0:
		t = time.Duration(svc.Timeout)
	}
	switch {
	case memory != nil:
		m = *memory
	case svc.Memory > 0:
		m = svc.Memory
	}
	return l, t, m
}

// ServiceDefaults finds the settings the nodes give jobs of a type,
// preferring an ONLINE node's, and whether any registered node offers it.
func ServiceDefaults(nodes []*Node, jobType string) (NodeService, bool) {
	var found *NodeService
	for _, n := range nodes {
		svc, ok := n.Service(jobType)
		if !ok {
			continue
		}
		if n.State == NodeOnline {
			return svc, true
		}
		if found == nil {
			found = &svc
		}
	}
	if found == nil {
		return NodeService{}, false
	}
	return *found, true
}

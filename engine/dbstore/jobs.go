package dbstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// JobInsert creates a job. Status must be QUEUED or INSTANTIATED; MaxAttempts
// 0 means 1 and Timeout 0 means engine.DefaultJobTimeout. queued_at is set
// for a QUEUED job. A ParentID that names no job is a *NotFoundError.
func (s *Store) JobInsert(ctx context.Context, p engine.JobInsertParams) (*engine.Job, error) {
	a, err := s.jobInsertArgs(p)
	if err != nil {
		return nil, err
	}
	var job *engine.Job
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		if p.ParentID != nil {
			if err := s.jobMustExist(ctx, tx, *p.ParentID); err != nil {
				return fmt.Errorf("parent %w", err)
			}
		}
		var id int64
		if s.dialect.insertReturnsID {
			if err := s.get(ctx, tx, &id, qJobInsert, a); err != nil {
				return err
			}
		} else {
			query, params, err := s.bind(tx, qJobInsert, a, false)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, query, params...)
			if err != nil {
				return err
			}
			if id, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		job, err = s.jobGet(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("insert job: %w", err)
	}
	s.jobChanged(job.Status)
	return job, nil
}

// JobSubmit creates one job with the service defaults of its type in the
// statement that inserts it (job_submit) and records its event; see
// engine.Store. On PostgreSQL that is one statement; SQLite records the
// event in a second, and MySQL, whose INSERT returns no rows, reads what
// the nodes offer in a third, each in one transaction.
func (s *Store) JobSubmit(ctx context.Context, p engine.JobSubmitParams) (engine.JobSubmitted, error) {
	if p.KeyPosition != nil || p.RollbackOf != nil {
		return engine.JobSubmitted{}, engine.ErrInsertManyPlace
	}
	a, err := s.jobInsertArgs(p.JobInsertParams)
	if err != nil {
		return engine.JobSubmitted{}, err
	}
	ev := p.Event
	ev.JobIDs, ev.Type = nil, ""
	if err := engine.ValidateEventAppend(ev); err != nil {
		return engine.JobSubmitted{}, err
	}
	a["service_load"], a["service_timeout"], a["service_memory"] = p.ServiceLoad, p.ServiceTimeout, p.ServiceMemory
	a["run_in"], a["run_in_seconds"] = p.RunIn != nil, 0.0
	if p.RunIn != nil {
		a["run_in_seconds"] = p.RunIn.Seconds()
	}
	a["no_parent"] = p.ParentID == nil
	a["who"], a["verb"], a["node"], a["schedule"], a["detail"], a["reason"] = ev.Who, ev.Verb, ev.Node, ev.Schedule, ev.Detail, ev.Reason
	out, inserted, err := s.jobSubmit(ctx, a)
	if err != nil {
		return engine.JobSubmitted{}, fmt.Errorf("insert job: %w", err)
	}
	if !inserted {
		if p.ParentID != nil {
			if err := s.jobMustExist(ctx, s.q, *p.ParentID); err != nil {
				return engine.JobSubmitted{}, fmt.Errorf("parent %w", err)
			}
		}
		// A node of a release that stored its service's timeout as text
		// alone: the defaults are read in Go, as from any release.
		return s.jobSubmitFromNodes(ctx, p, ev)
	}
	s.jobChanged(p.Status)
	return out, nil
}

// submittedRow is what job_submit returns.
type submittedRow struct {
	ID             int64           `db:"id"`
	Load           float64         `db:"job_load"`
	Offered        bool            `db:"offered"`
	LargestMaxLoad sql.NullFloat64 `db:"largest_max_load"`
}

func (r submittedRow) submitted() engine.JobSubmitted {
	return engine.JobSubmitted{ID: r.ID, Load: r.Load, Offered: r.Offered,
		OnlineOffered: r.LargestMaxLoad.Valid, LargestMaxLoad: r.LargestMaxLoad.Float64}
}

// jobSubmit runs job_submit and records the event; inserted is false when
// it inserted nothing.
func (s *Store) jobSubmit(ctx context.Context, a args) (out engine.JobSubmitted, inserted bool, err error) {
	if s.dialect.insertInWith {
		defer s.writing(false)()
		var row submittedRow
		err := s.get(ctx, s.q, &row, qJobSubmit, a)
		if isNoRows(err) {
			return out, false, nil
		}
		return row.submitted(), err == nil, err
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		inserted = false
		var row submittedRow
		if s.dialect.insertReturnsID {
			if err := s.get(ctx, tx, &row, qJobSubmit, a); err != nil {
				if isNoRows(err) {
					return nil
				}
				return err
			}
		} else {
			query, params, err := s.bind(tx, qJobSubmit, a, false)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, query, params...)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err
			}
			if row.ID, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		ev := args{"ids": []int64{row.ID}}
		for _, k := range []string{"who", "verb", "node", "schedule", "detail", "reason"} {
			ev[k] = a[k]
		}
		if n, err := s.execIn(ctx, tx, qEventAppendJobs, ev); err != nil || n != 1 {
			return cmp.Or(err, fmt.Errorf("recorded %d events for job %d", n, row.ID))
		}
		if !s.dialect.insertReturnsID {
			id := row.ID
			if err := s.get(ctx, tx, &row, qJobSubmitOffered, args{"id": id, "type": a["type"]}); err != nil {
				return err
			}
			row.ID = id
		}
		out, inserted = row.submitted(), true
		return nil
	})
	return out, inserted, err
}

// jobSubmitFromNodes is JobSubmit with the defaults read from NodeList,
// the job and its event in one transaction.
func (s *Store) jobSubmitFromNodes(ctx context.Context, p engine.JobSubmitParams, ev engine.EventAppendParams) (engine.JobSubmitted, error) {
	nodes, err := s.NodeList(ctx)
	if err != nil {
		return engine.JobSubmitted{}, err
	}
	ip, out := engine.SubmitDefaults(nodes, p)
	if p.RunIn != nil {
		now, err := s.Now(ctx)
		if err != nil {
			return engine.JobSubmitted{}, err
		}
		at := now.Add(*p.RunIn)
		ip.RunAfter = &at
	}
	err = s.Tx(ctx, func(tx engine.TxStore) error {
		job, err := tx.JobInsert(ctx, ip)
		if err != nil {
			return err
		}
		ev.JobIDs = []int64{job.ID}
		out.ID = job.ID
		return tx.EventAppend(ctx, ev)
	})
	if err != nil {
		return engine.JobSubmitted{}, err
	}
	return out, nil
}

// insertRow is a new job as the statements that insert it take it:
// validated, with its defaults filled in and its argv as JSON. A bulk
// insert keeps its rows in this form, not as a map of parameters each:
// building thousands of maps a second was a quarter of the CPU of a bulk
// insert's caller.
type insertRow struct {
	typ, operation, args, payload     string
	load                              float64
	status, key                       string
	parentID, keyPosition, rollbackOf *int64
	maxAttempts                       int
	backoffSeconds, timeoutSeconds    float64
	rollback, rollbackType            string
	runAfter                          any // as the dialect binds a time; nil for none
	creator                           string
	priority                          int
	memoryLimit                       int64
}

// jobInsertRow validates a new job and fills in its defaults.
func (s *Store) jobInsertRow(p engine.JobInsertParams) (insertRow, error) {
	if err := engine.ValidateJobInsert(p); err != nil {
		return insertRow{}, err
	}
	payload := strings.TrimSpace(string(p.Payload))
	if payload == "" {
		payload = "{}"
	}
	argsJSON := "[]"
	if len(p.Args) > 0 {
		b, err := json.Marshal(p.Args)
		if err != nil {
			return insertRow{}, err
		}
		argsJSON = string(b)
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = engine.DefaultJobTimeout
	}
	var runAfter any
	if p.RunAfter != nil {
		runAfter = s.dialect.timeArg(*p.RunAfter)
	}
	return insertRow{
		typ: p.Type, operation: p.Operation, args: argsJSON, payload: payload, load: p.Load,
		status: string(p.Status), key: p.Key, parentID: p.ParentID, keyPosition: p.KeyPosition,
		rollbackOf: p.RollbackOf, maxAttempts: max(p.MaxAttempts, 1), backoffSeconds: p.Backoff.Seconds(),
		timeoutSeconds: timeout.Seconds(), rollback: p.Rollback, rollbackType: p.RollbackType,
		runAfter: runAfter, creator: p.Creator, priority: engine.PriorityOr(p.Priority), memoryLimit: p.MemoryLimit,
	}, nil
}

// params are the row's named query parameters.
func (r insertRow) params() args {
	return args{
		"type":            r.typ,
		"operation":       r.operation,
		"args":            r.args,
		"payload":         r.payload,
		"load":            r.load,
		"status":          r.status,
		"job_key":         r.key,
		"parent_id":       r.parentID,
		"max_attempts":    r.maxAttempts,
		"backoff_seconds": r.backoffSeconds,
		"rollback":        r.rollback,
		"rollback_type":   r.rollbackType,
		"key_position":    r.keyPosition,
		"rollback_of":     r.rollbackOf,
		"run_after":       r.runAfter,
		"timeout_seconds": r.timeoutSeconds,
		"creator":         r.creator,
		"queued":          r.status == string(engine.StatusQueued),
		"priority":        r.priority,
		"memory_limit":    r.memoryLimit,
	}
}

// jobInsertArgs validates a new job and turns it into query parameters.
func (s *Store) jobInsertArgs(p engine.JobInsertParams) (args, error) {
	r, err := s.jobInsertRow(p)
	if err != nil {
		return nil, err
	}
	return r.params(), nil
}

// JobGet returns the job, or a *NotFoundError.
func (s *Store) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	return s.jobGet(ctx, s.q, id)
}

func (s *Store) jobGet(ctx context.Context, q querier, id int64) (*engine.Job, error) {
	var row jobRow
	if err := s.get(ctx, q, &row, qJobGet, args{"id": id}); err != nil {
		if isNoRows(err) {
			return nil, jobNotFound(id)
		}
		return nil, fmt.Errorf("read job %d: %w", id, err)
	}
	return row.job()
}

// jobMustExist returns a *NotFoundError unless the job exists.
func (s *Store) jobMustExist(ctx context.Context, q querier, id int64) error {
	var n int64
	if err := s.get(ctx, q, &n, qJobExists, args{"id": id}); err != nil {
		return err
	}
	if n == 0 {
		return jobNotFound(id)
	}
	return nil
}

// JobList returns the matching jobs ordered by id; with Limit, the newest
// Limit of them (still oldest first). With a sort, the first Limit in its
// order.
func (s *Store) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	if p.Sort.Field != "" {
		if _, err := engine.JobSortFieldNamed(p.Sort.Field); err != nil {
			return nil, err
		}
	}
	parts := s.jobListParts(p)
	var all []*engine.Job
	err := s.inSnapshot(ctx, len(parts) > 1, func(q querier) error {
		for _, part := range parts {
			jobs, err := s.jobList(ctx, q, part)
			if err != nil {
				return err
			}
			all = append(all, jobs...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return all, nil
	}
	// Merged as one statement would have ordered and limited them: sorted,
	// the first Limit in the sort's order; unsorted, the newest Limit,
	// oldest first.
	if p.Sort.Field == "" {
		slices.SortFunc(all, engine.JobSort{}.Compare)
		if p.Limit > 0 && len(all) > p.Limit {
			all = all[len(all)-p.Limit:]
		}
		return all, nil
	}
	slices.SortFunc(all, p.Sort.Compare)
	if p.Limit > 0 && len(all) > p.Limit {
		all = all[:p.Limit]
	}
	return all, nil
}

// jobListParts are the listings JobList runs for p and merges: p itself,
// or for live statuses that lie in both indexes of live jobs (liveParts)
// one listing for each part. A brief row may lack a sort's field, which
// the merge compares, so a sorted brief listing is p itself.
func (s *Store) jobListParts(p engine.JobListParams) []engine.JobListParams {
	parts := s.liveParts(p.Statuses)
	if !liveOnly(p.Statuses) || len(parts) < 2 || (p.Sort.Field != "" && p.Brief) {
		return []engine.JobListParams{p}
	}
	out := make([]engine.JobListParams, len(parts))
	for i, part := range parts {
		out[i] = p
		out[i].Statuses = part
	}
	return out
}

// liveOnly reports whether statuses name live statuses alone.
func liveOnly(statuses []engine.Status) bool {
	return len(statuses) > 0 && !slices.ContainsFunc(statuses, engine.Status.Terminal)
}

// jobList runs the one job_list statement of p's shape. Live jobs are
// few: they are looked up by status. Ended ones may be millions, read
// newest first until the limit.
func (s *Store) jobList(ctx context.Context, q querier, p engine.JobListParams) ([]*engine.Job, error) {
	live := liveOnly(p.Statuses)
	a := s.jobListArgs(p)
	a["limit"] = limitOrAll(p.Limit)
	jobs := []*engine.Job{}
	if err := s.selectRows(ctx, q, &jobs, jobListQueryName(p.Sort, live, p.Brief), a, true); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	if p.Sort.Field == "" {
		slices.Reverse(jobs) // the query reads newest first so LIMIT keeps the newest
	}
	return jobs, nil
}

// jobListArgs are the parameters of job_list_filter.
func (s *Store) jobListArgs(p engine.JobListParams) args {
	// IN () is not valid SQL, so an unused list filter gets a dummy value
	// and its "all" flag.
	statuses := make([]string, 0, len(p.Statuses))
	for _, st := range p.Statuses {
		statuses = append(statuses, string(st))
	}
	if len(statuses) == 0 {
		statuses = []string{""}
	}
	types := p.Types
	if len(types) == 0 {
		types = []string{""}
	}
	var parentID int64
	if p.ParentID != nil {
		parentID = *p.ParentID
	}
	parentIDs := p.ParentIDs
	if len(parentIDs) == 0 {
		parentIDs = []int64{0}
	}
	return args{
		"all_statuses": len(p.Statuses) == 0,
		"statuses":     statuses,
		"all_types":    len(p.Types) == 0,
		"types":        types,
		"node":         p.Node,
		"job_key":      p.Key,
		"any_parent":   p.ParentID == nil,
		"roots":        p.Roots,
		"parent_id":    parentID,
		"any_parents":  len(p.ParentIDs) == 0,
		"parent_ids":   parentIDs,
		"creator":      p.Creator,
		// An open end of the creation window is switched off by its flag;
		// its value only has to bind.
		"any_created_after":  p.CreatedAfter == nil,
		"created_after":      s.windowArg(p.CreatedAfter, true),
		"any_created_before": p.CreatedBefore == nil,
		"created_before":     s.windowArg(p.CreatedBefore, false),
		"double_fault":       p.DoubleFault,
		"min_id":             p.MinID,
		"max_id":             maxIDArg(p.MaxID),
		"any_priority_min":   p.PriorityMin == 0,
		"priority_min":       p.PriorityMin,
		"any_priority_max":   p.PriorityMax == 0,
		"priority_max":       p.PriorityMax,
		"oom_killed":         p.OOMKilled,
	}
}

// maxIDArg binds an upper bound of ids; 0, an open end, as the largest id.
func maxIDArg(maxID int64) int64 {
	if maxID <= 0 {
		return math.MaxInt64
	}
	return maxID
}

// windowArg binds an inclusive bound of the creation window. Stored times
// have the dialect's precision, so a finer lower bound is raised to the
// next step and a finer upper bound lowered to its step: created_at >= the
// raised bound holds exactly when created_at >= t, and likewise for <=.
// Binding the finer time as it is would leave its rounding to the driver
// and server (PostgreSQL rounds to the nearest microsecond, SQLite's text
// would be cut to the millisecond), letting a job just outside in.
func (s *Store) windowArg(t *time.Time, lower bool) any {
	if t == nil {
		return s.dialect.timeArg(time.Unix(0, 0))
	}
	step := s.dialect.timeStep
	v := t.UTC().Truncate(step)
	if lower && v.Before(*t) {
		v = v.Add(step)
	}
	return s.dialect.timeArg(v)
}

// JobUpdate applies one guarded transition (see engine.JobUpdate) and
// returns the job as the transition left it. It returns a
// *engine.TransitionError for a transition the state machine forbids,
// engine.ErrConflict when the job no longer has the expected status and
// version, and a *NotFoundError for an unknown job.
func (s *Store) JobUpdate(ctx context.Context, u engine.JobUpdate) (*engine.Job, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	if u.RunAfterSeconds != nil && (math.IsNaN(*u.RunAfterSeconds) || math.IsInf(*u.RunAfterSeconds, 0)) {
		return nil, fmt.Errorf("update job %d: run after %v seconds is not a number", u.ID, *u.RunAfterSeconds)
	}
	if err := engine.CheckUsage(u); err != nil {
		return nil, err
	}
	a := args{
		"id":                u.ID,
		"from":              string(u.From),
		"version":           u.Version,
		"to":                string(u.To),
		"set_node":          u.Node != nil,
		"node":              deref(u.Node),
		"attempt_increment": 0,
		"rebase_attempts":   u.RebaseAttempts,
		"set_exit_code":     u.ExitCode != nil,
		"exit_code":         u.ExitCode,
		"set_message":       u.Message != nil,
		"message":           deref(u.Message),
		"set_run_after":     u.RunAfterSeconds != nil,
		"run_after_seconds": deref(u.RunAfterSeconds),
		"clear_result":      u.ClearResult,
		"mark_queued":       u.MarkQueued,
		"mark_started":      u.MarkStarted,
		"mark_finished":     u.MarkFinished,
		"set_usage":         u.Usage != nil,
		"cpu_seconds":       0.0,
		"peak_memory":       int64(0),
		"wall_seconds":      0.0,
		"oom_killed":        false,
		"set_lease":         u.StartedUnder != nil,
		"dispatcher":        "",
		"lease_term":        int64(0),
		"set_priority":      u.Priority != nil,
		"priority":          deref(u.Priority),
	}
	if t := u.StartedUnder; t != nil {
		a["dispatcher"], a["lease_term"] = t.Owner, t.Term
	}
	if us := u.Usage; us != nil {
		a["cpu_seconds"], a["peak_memory"], a["wall_seconds"], a["oom_killed"] = us.CPUSeconds, us.PeakMemory, us.WallSeconds, us.OOMKilled
	}
	if u.IncrementAttempt {
		a["attempt_increment"] = 1
	}
	var job *engine.Job
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.exec(ctx, tx, qJobUpdate, a)
		if err != nil {
			return err
		}
		if n == 0 {
			if err := s.jobMustExist(ctx, tx, u.ID); err != nil {
				return err
			}
			return fmt.Errorf("job %d is no longer %s at version %d: %w", u.ID, u.From, u.Version, engine.ErrConflict)
		}
		// In the same transaction: the row is still as this update left it.
		job, err = s.jobGet(ctx, tx, u.ID)
		return err
	})
	if err != nil {
		if isDomainError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("update job %d: %w", u.ID, err)
	}
	s.jobChanged(job.Status)
	return job, nil
}

// JobProgressSet records progress (clamped to 0–100) of a running attempt.
// It returns engine.ErrConflict when the job has moved on — another attempt,
// another node, or no longer running — and a *NotFoundError for an unknown job.
func (s *Store) JobProgressSet(ctx context.Context, p engine.JobProgressParams) error {
	a := args{
		"id":       p.ID,
		"attempt":  p.Attempt,
		"node":     p.Node,
		"progress": min(max(p.Progress, 0), 100),
		"message":  p.Message,
	}
	n, err := s.exec(ctx, s.q, qJobProgressSet, a)
	if err != nil {
		return fmt.Errorf("set progress of job %d: %w", p.ID, err)
	}
	if n > 0 {
		return nil
	}
	if err := s.jobMustExist(ctx, s.q, p.ID); err != nil {
		return err
	}
	return fmt.Errorf("job %d attempt %d is no longer running on %q: %w", p.ID, p.Attempt, p.Node, engine.ErrConflict)
}

// JobListDispatchable returns one page of one queue; see engine.Store.
// With p.Long on PostgreSQL the page is read in index order whatever the
// planner's statistics say.
func (s *Store) JobListDispatchable(ctx context.Context, p engine.JobDispatchableParams) ([]*engine.Job, error) {
	if err := engine.CheckDispatchable(p); err != nil {
		return nil, err
	}
	a := args{"status": string(p.Status), "type": p.Type, "limit": limitOrAll(p.Limit),
		"after_priority": p.After.Priority, "after_id": p.After.ID,
		// An open end of the load range binds a bound no load reaches
		// (engine.MaxJobLoad), so one statement serves every range.
		"max_load": 2 * engine.MaxJobLoad, "load_above": -1.0}
	if p.After == (engine.QueuePlace{}) {
		a["after_priority"] = engine.MaxPriority + 1
	}
	if p.MaxLoad != nil {
		a["max_load"] = *p.MaxLoad
	}
	if p.LoadAbove != nil {
		a["load_above"] = *p.LoadAbove
	}
	query := qJobListDispatchable
	switch {
	case p.FirstChildren:
		query = qJobListFirstChildren
	case p.After != engine.QueuePlace{}:
		query = qJobListDispatchableAfter
	}
	jobs := make([]*engine.Job, 0, min(max(p.Limit, 0), jobUpdateChunk))
	read := func(q querier) error { return s.selectRows(ctx, q, &jobs, query, a, false) }
	var err error
	if p.Long && s.dialect.pageInIndexOrder != "" && s.tx == nil {
		// The queue's statistics are rarely right: it fills and drains
		// between two looks of autovacuum. Believing a long queue short, the
		// planner reads every entry of the queue through a bitmap and
		// sorts them, instead of the first page in index order: 95 ms for
		// a page of 1000 out of 100,000 instead of 2.5 ms. A short queue
		// is read fast either way, without the transaction's round trips.
		err = s.inTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, s.dialect.pageInIndexOrder); err != nil {
				return err
			}
			return read(tx)
		})
	} else {
		err = read(s.q)
	}
	if err != nil {
		return nil, fmt.Errorf("list dispatchable jobs: %w", err)
	}
	return jobs, nil
}

// queueLoadsRow is a row of job_queue_loads.
type queueLoadsRow struct {
	Status   string  `db:"status"`
	Type     string  `db:"type"`
	Lightest float64 `db:"lightest"`
	Heaviest float64 `db:"heaviest"`
	Children int     `db:"children"`
}

// JobQueueLoads describes every non-empty queue in one statement of index
// steps; see engine.Store.
func (s *Store) JobQueueLoads(ctx context.Context) ([]engine.QueueLoads, error) {
	var rows []queueLoadsRow
	if err := s.selectRows(ctx, s.withKept(s.q), &rows, qJobQueueLoads, args{}, false); err != nil {
		return nil, fmt.Errorf("describe the queues: %w", err)
	}
	out := make([]engine.QueueLoads, len(rows))
	for i, r := range rows {
		out[i] = engine.QueueLoads{Status: engine.Status(r.Status), Type: r.Type, Lightest: r.Lightest,
			Heaviest: r.Heaviest, Children: r.Children > 0}
	}
	slices.SortFunc(out, engine.CompareQueues)
	return out, nil
}

// isDomainError reports the errors callers branch on, which go out as they
// are rather than wrapped in a "cannot …" message.
func isDomainError(err error) bool {
	return errors.Is(err, engine.ErrNotFound) || errors.Is(err, engine.ErrConflict) ||
		errors.Is(err, engine.ErrInvalidTransition) || errors.Is(err, engine.ErrNodeOnline)
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

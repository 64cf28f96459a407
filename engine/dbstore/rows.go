package dbstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// dbTime scans a timestamp from any backend: PostgreSQL hands over a
// time.Time, SQLite the text of sqliteTimeLayout. NULL leaves Valid false.
// Times always come out in UTC.
type dbTime struct {
	Time  time.Time
	Valid bool
}

// Scan implements sql.Scanner.
func (t *dbTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*t = dbTime{}
		return nil
	case time.Time:
		*t = dbTime{Time: x.UTC(), Valid: true}
		return nil
	case string:
		return t.parse(x)
	case []byte:
		return t.parse(string(x))
	}
	return fmt.Errorf("cannot read %T as a timestamp", v)
}

func (t *dbTime) parse(s string) error {
	// The layout with optional fractional digits also reads whole seconds.
	p, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, time.UTC)
	if err != nil {
		return fmt.Errorf("cannot read %q as a timestamp: %w", s, err)
	}
	*t = dbTime{Time: p, Valid: true}
	return nil
}

// ptr is the time as the optional field of a domain type.
func (t dbTime) ptr() *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time
	return &v
}

// seconds converts stored float seconds back to a duration, rounding to the
// nanosecond so 0.1s does not come back as 99.999999ms.
func seconds(s float64) engine.Duration {
	return engine.Duration(time.Duration(math.Round(s * float64(time.Second))))
}

// jobRow is a jobs row as the database returns it.
type jobRow struct {
	ID              int64   `db:"id"`
	Type            string  `db:"type"`
	Operation       string  `db:"operation"`
	Args            string  `db:"args"`
	Payload         string  `db:"payload"`
	Load            float64 `db:"job_load"`
	Status          string  `db:"status"`
	Node            string  `db:"node"`
	Key             string  `db:"job_key"`
	ParentID        *int64  `db:"parent_id"`
	Attempt         int     `db:"attempt"`
	MaxAttempts     int     `db:"max_attempts"`
	AttemptBase     int     `db:"attempt_base"`
	BackoffSeconds  float64 `db:"backoff_seconds"`
	Rollback        string  `db:"rollback"`
	RunAfter        dbTime  `db:"run_after"`
	TimeoutSeconds  float64 `db:"timeout_seconds"`
	Progress        int     `db:"progress"`
	ProgressMessage string  `db:"progress_message"`
	ExitCode        *int64  `db:"exit_code"`
	Message         string  `db:"message"`
	Version         int64   `db:"version"`
	Creator         string  `db:"creator"`
	CreatedAt       dbTime  `db:"created_at"`
	QueuedAt        dbTime  `db:"queued_at"`
	StartedAt       dbTime  `db:"started_at"`
	FinishedAt      dbTime  `db:"finished_at"`
	Dispatcher      string  `db:"dispatcher"`
	LeaseTerm       int64   `db:"lease_term"`
	KeyPosition     *int64  `db:"key_position"`
	RollbackType    string  `db:"rollback_type"`
	RollbackJobID   *int64  `db:"rollback_job_id"`
	RollbackOf      *int64  `db:"rollback_of"`
	Priority        int     `db:"priority"`
	MemoryLimit     int64   `db:"memory_limit"`
	usageColumns
	// WaitedSeconds is engine.Job.Waited, which only a start reads back
	// (job_columns_started).
	WaitedSeconds sql.NullFloat64 `db:"waited_seconds"`
}

// usageColumns are the measured use of a run as jobs and job_attempts
// store it: all NULL when the run was not measured.
type usageColumns struct {
	CPUSeconds  sql.NullFloat64 `db:"cpu_seconds"`
	PeakMemory  sql.NullInt64   `db:"peak_memory"`
	WallSeconds sql.NullFloat64 `db:"wall_seconds"`
	OOMKilled   bool            `db:"oom_killed"`
}

// usage is the stored use, nil when the run was not measured.
func (u usageColumns) usage() *engine.Usage {
	if !u.CPUSeconds.Valid {
		return nil
	}
	return &engine.Usage{CPUSeconds: u.CPUSeconds.Float64, PeakMemory: u.PeakMemory.Int64,
		WallSeconds: u.WallSeconds.Float64, OOMKilled: u.OOMKilled}
}

// jobColumns are the columns of job_columns.sql, in its order, and last
// the one a start computes (waited_seconds, of job_columns_started).
var jobColumns = []string{"id", "type", "operation", "args", "payload", "job_load", "status", "node", "job_key",
	"parent_id", "attempt", "max_attempts", "attempt_base", "backoff_seconds", "rollback", "run_after",
	"timeout_seconds", "progress", "progress_message", "exit_code", "message", "version", "creator",
	"created_at", "queued_at", "started_at", "finished_at", "dispatcher", "lease_term", "key_position",
	"rollback_type", "rollback_job_id", "rollback_of", "priority", "memory_limit", "cpu_seconds", "peak_memory",
	"wall_seconds", "oom_killed", "waited_seconds"}

// fieldsInto appends r's fields, in the order of jobColumns, to dst[:0].
func (r *jobRow) fieldsInto(dst []any) []any {
	return append(dst[:0], &r.ID, &r.Type, &r.Operation, &r.Args, &r.Payload, &r.Load, &r.Status, &r.Node, &r.Key,
		&r.ParentID, &r.Attempt, &r.MaxAttempts, &r.AttemptBase, &r.BackoffSeconds, &r.Rollback, &r.RunAfter,
		&r.TimeoutSeconds, &r.Progress, &r.ProgressMessage, &r.ExitCode, &r.Message, &r.Version, &r.Creator,
		&r.CreatedAt, &r.QueuedAt, &r.StartedAt, &r.FinishedAt, &r.Dispatcher, &r.LeaseTerm, &r.KeyPosition,
		&r.RollbackType, &r.RollbackJobID, &r.RollbackOf, &r.Priority, &r.MemoryLimit, &r.CPUSeconds, &r.PeakMemory,
		&r.WallSeconds, &r.OOMKilled, &r.WaitedSeconds)
}

// selectJobs runs a query of job rows into dest, the job of each row, each
// column read into the field of its name; what dest held goes, so that a
// transaction run again after a deadlock reads its rows afresh. It maps the
// columns to fields once per query, not once per row as sqlx does by
// reflection, which cost more than a third of the CPU of a node working
// short jobs: the queries read all columns, the brief ones, the
// dispatcher's queued ones or a node's started ones, and each of these sets is scanned field by field.
// Every row is read into the same jobRow, whose fields of the query's
// columns each scan writes, a NULL too: a slice of rows, more than half a
// kilobyte each, was a large allocation zeroed and collected for each page
// of a dispatch round and each batch of starts.
func selectJobs(ctx context.Context, q querier, dest *[]*engine.Job, query string, params []any) error {
	rows, err := q.QueryContext(ctx, query, params...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	positions := make([]int, len(cols))
	for i, c := range cols {
		if positions[i] = slices.Index(jobColumns, c); positions[i] < 0 {
			return fmt.Errorf("a job row has no column %q", c)
		}
	}
	*dest = (*dest)[:0]
	var row jobRow
	all, fields := row.fieldsInto(make([]any, 0, len(jobColumns))), make([]any, len(cols))
	for i, p := range positions {
		fields[i] = all[p]
	}
	var sc rowScanner
	for rows.Next() {
		if err := sc.scan(rows, fields); err != nil {
			return err
		}
		job, err := row.job()
		if err != nil {
			return err
		}
		*dest = append(*dest, job)
	}
	return rows.Err()
}

// selectInt64s appends the integers a query returns to dest, as
// sqlx.Select would, whose reflection allocated twice a row: its one
// integer column, a row each, or, where that column is a PostgreSQL array
// (array_agg, NULL for none), the elements of each. The PostgreSQL
// statements that write a batch of jobs return their ids so, one value for
// the node to read where a row per id cost it a protocol message and two
// allocations, for every job it started and ended.
func selectInt64s(ctx context.Context, q querier, dest *[]int64, query string, params []any) error {
	rows, err := q.QueryContext(ctx, query, params...)
	if err != nil {
		return err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	array := len(types) == 1 && slices.Contains([]string{"_INT8", "_INT4", "_INT2"}, types[0].DatabaseTypeName())
	out := *dest
	for rows.Next() {
		if array {
			var text sql.RawBytes
			if err := rows.Scan(&text); err != nil {
				return err
			}
			if out, err = appendInt64Array(out, text); err != nil {
				return err
			}
			continue
		}
		var v int64
		if err := rows.Scan(&v); err != nil {
			return err
		}
		out = append(out, v)
	}
	*dest = out
	return rows.Err()
}

// appendInt64Array appends the elements of text, a PostgreSQL array of
// bigint such as {1,2,3}, or nothing for NULL (nil).
func appendInt64Array(ids []int64, text []byte) ([]int64, error) {
	if text == nil {
		return ids, nil
	}
	if len(text) < 2 || text[0] != '{' || text[len(text)-1] != '}' {
		return ids, fmt.Errorf("%.40q is not an array", text)
	}
	inner := text[1 : len(text)-1]
	if len(inner) == 0 {
		return ids, nil
	}
	ids = slices.Grow(ids, bytes.Count(inner, []byte{','})+1)
	for field := range bytes.SplitSeq(inner, []byte{','}) {
		id, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return ids, fmt.Errorf("array %.40q: %w", text, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// rowScanner scans rows into fields of the types jobRow has. database/sql
// converts most values to a field through reflection, which cost a node
// working short jobs a tenth of its CPU; the values PostgreSQL and SQLite
// hand over (int64, float64, string, bool, time.Time, NULL) go straight
// into the fields here instead, read as they come (any) first. A value of
// any other kind, or a NULL where the field takes none, makes the scanner
// leave the row, and every row after it, to database/sql as before.
type rowScanner struct {
	values []any
	dests  []any // &values[i] each
	slow   bool
}

func (sc *rowScanner) scan(rows *sql.Rows, fields []any) error {
	if sc.slow {
		return rows.Scan(fields...)
	}
	if sc.values == nil {
		sc.values, sc.dests = make([]any, len(fields)), make([]any, len(fields))
		for i := range sc.values {
			sc.dests[i] = &sc.values[i]
		}
	}
	if err := rows.Scan(sc.dests...); err != nil {
		return err
	}
	for i, f := range fields {
		if !assignValue(f, sc.values[i]) {
			sc.slow = true
			return rows.Scan(fields...)
		}
	}
	return nil
}

// assignValue stores v in the field f points to where it goes there as
// database/sql would store it, and reports whether it did.
func assignValue(f, v any) bool {
	switch d := f.(type) {
	case *string:
		s, ok := v.(string)
		*d = s
		return ok
	case *int64:
		n, ok := v.(int64)
		*d = n
		return ok
	case *int:
		n, ok := v.(int64)
		*d = int(n)
		return ok && int64(int(n)) == n
	case *float64:
		x, ok := v.(float64)
		*d = x
		return ok
	case *bool:
		b, ok := v.(bool)
		*d = b
		return ok
	case **int64:
		if v == nil {
			*d = nil
			return true
		}
		n, ok := v.(int64)
		*d = &n
		return ok
	case *sql.NullInt64:
		n, ok := v.(int64)
		*d = sql.NullInt64{Int64: n, Valid: ok}
		return ok || v == nil
	case *sql.NullFloat64:
		x, ok := v.(float64)
		*d = sql.NullFloat64{Float64: x, Valid: ok}
		return ok || v == nil
	case *dbTime:
		return d.Scan(v) == nil
	}
	return false
}

func (r *jobRow) job() (*engine.Job, error) {
	j := &engine.Job{
		ID:              r.ID,
		Type:            r.Type,
		Operation:       r.Operation,
		Payload:         json.RawMessage(r.Payload),
		Load:            r.Load,
		Status:          engine.Status(r.Status),
		Node:            r.Node,
		Key:             r.Key,
		ParentID:        r.ParentID,
		Attempt:         r.Attempt,
		MaxAttempts:     r.MaxAttempts,
		AttemptBase:     r.AttemptBase,
		Backoff:         seconds(r.BackoffSeconds),
		Rollback:        r.Rollback,
		RunAfter:        r.RunAfter.ptr(),
		Timeout:         seconds(r.TimeoutSeconds),
		Progress:        r.Progress,
		ProgressMessage: r.ProgressMessage,
		Message:         r.Message,
		Version:         r.Version,
		Creator:         r.Creator,
		CreatedAt:       r.CreatedAt.Time,
		QueuedAt:        r.QueuedAt.ptr(),
		StartedAt:       r.StartedAt.ptr(),
		FinishedAt:      r.FinishedAt.ptr(),
		Dispatcher:      r.Dispatcher,
		LeaseTerm:       r.LeaseTerm,
		KeyPosition:     r.KeyPosition,
		RollbackType:    r.RollbackType,
		RollbackJobID:   r.RollbackJobID,
		RollbackOf:      r.RollbackOf,
		Priority:        r.Priority,
		MemoryLimit:     r.MemoryLimit,
		Usage:           r.usage(),
		Waited:          time.Duration(seconds(r.WaitedSeconds.Float64)),
	}
	if r.Payload == "" { // a brief row
		j.Payload = nil
	}
	if r.ExitCode != nil {
		j.ExitCode = engine.Ptr(int(*r.ExitCode))
	}
	// A brief row has no args at all; a full one has at least "[]", the
	// args of most jobs, which need no decoder.
	if r.Args != "" && r.Args != "[]" {
		if err := json.Unmarshal([]byte(r.Args), &j.Args); err != nil {
			return nil, fmt.Errorf("job %d: stored args are not a JSON list of strings: %w", r.ID, err)
		}
	}
	if j.Args == nil {
		j.Args = []string{}
	}
	return j, nil
}

// nodeRow is a nodes row with the live figures of node_select.
type nodeRow struct {
	Name            string  `db:"name"`
	URL             string  `db:"url"`
	MaxLoad         float64 `db:"max_load"`
	MaxJobs         int     `db:"max_jobs"`
	Weight          int     `db:"weight"`
	WarmupSeconds   float64 `db:"warmup_seconds"`
	AcceptExceeding bool    `db:"accept_exceeding"`
	Candidate       bool    `db:"candidate"`
	Services        string  `db:"services"`
	State           string  `db:"state"`
	Maintenance     bool    `db:"maintenance"`
	StartedAt       dbTime  `db:"started_at"`
	LastSeen        dbTime  `db:"last_seen"`
	LoadAvg         float64 `db:"load_avg"`
	MaxLoadAvg      float64 `db:"max_load_avg"`
	MemAvailable    int64   `db:"mem_available"`
	ReservedMemory  int64   `db:"reserved_memory"`
	Cores           int     `db:"cores"`
	LeaseMS         int64   `db:"lease_ms"`
	HostID          string  `db:"host_id"`
	Hostname        string  `db:"hostname"`
	PID             int     `db:"pid"`
	ProcStart       int64   `db:"proc_start"`
	BeatMissedAt    dbTime  `db:"beat_missed_at"`
	RunningUsage    string  `db:"running_usage"`
	TotalLoad       float64 `db:"total_load"`
	Running         int     `db:"running"`
	Dispatcher      int     `db:"dispatcher"`
}

func (r *nodeRow) node() (*engine.Node, error) {
	n := &engine.Node{
		Name:            r.Name,
		URL:             r.URL,
		MaxLoad:         r.MaxLoad,
		MaxJobs:         r.MaxJobs,
		Weight:          r.Weight,
		Warmup:          seconds(r.WarmupSeconds),
		AcceptExceeding: r.AcceptExceeding,
		Candidate:       r.Candidate,
		State:           nodeState(engine.NodeState(r.State), r.Maintenance),
		Maintenance:     r.Maintenance,
		StartedAt:       r.StartedAt.Time,
		LastSeen:        r.LastSeen.Time,
		LoadAvg:         r.LoadAvg,
		MaxLoadAvg:      r.MaxLoadAvg,
		MemAvailable:    r.MemAvailable,
		ReservedMemory:  r.ReservedMemory,
		Cores:           r.Cores,
		Load:            r.TotalLoad,
		Running:         r.Running,
		Dispatcher:      r.Dispatcher != 0,
		Lease:           engine.Duration(time.Duration(r.LeaseMS) * time.Millisecond),
		Process:         engine.NodeProcess{Host: r.HostID, Hostname: r.Hostname, PID: r.PID, StartTime: r.ProcStart},
		BeatMissedAt:    r.BeatMissedAt.ptr(),
	}
	if err := json.Unmarshal([]byte(r.Services), &n.Services); err != nil {
		return nil, fmt.Errorf("node %s: stored services are not a JSON list: %w", r.Name, err)
	}
	if n.Services == nil {
		n.Services = []engine.NodeService{}
	}
	if err := json.Unmarshal([]byte(r.RunningUsage), &n.RunningUsage); err != nil {
		return nil, fmt.Errorf("node %s: stored running usage is not a JSON list: %w", r.Name, err)
	}
	if n.RunningUsage == nil {
		n.RunningUsage = []engine.LiveUsage{}
	}
	return n, nil
}

// nodeState is the state a node shows: its stored health, except that an
// ONLINE node with the maintenance flag on shows MAINTENANCE, which keeps it
// out of placement. An OFFLINE or ERROR node shows that, flag or not: its
// health is the more pressing news, and it takes no work either way.
func nodeState(stored engine.NodeState, maintenance bool) engine.NodeState {
	if stored == engine.NodeOnline && maintenance {
		return engine.NodeMaintenance
	}
	return stored
}

// logRow is a job_logs row.
type logRow struct {
	Seq       int64  `db:"seq"`
	JobID     int64  `db:"job_id"`
	Attempt   int    `db:"attempt"`
	Stream    string `db:"stream"`
	Data      []byte `db:"data"`
	CreatedAt dbTime `db:"created_at"`
}

// leaseRow is the lease row read with the database clock.
type leaseRow struct {
	Owner      string `db:"owner"`
	ExpiresAt  dbTime `db:"expires_at"`
	Term       int64  `db:"term"`
	AcquiredAt dbTime `db:"acquired_at"`
	Now        dbTime `db:"db_now"`
}

// leaseTermRow is the term of the lease as lease_acquire returns it.
type leaseTermRow struct {
	Term       int64  `db:"term"`
	AcquiredAt dbTime `db:"acquired_at"`
}

// migrationRow is a schema_migrations row.
type migrationRow struct {
	Version   int    `db:"version"`
	Name      string `db:"name"`
	AppliedAt dbTime `db:"applied_at"`
}

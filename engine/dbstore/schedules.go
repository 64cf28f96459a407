package dbstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// Query names of the schedules table.
const (
	qScheduleInsert     = "schedule_insert"
	qScheduleGet        = "schedule_get"
	qScheduleList       = "schedule_list"
	qScheduleListDue    = "schedule_list_due"
	qScheduleSetPaused  = "schedule_set_paused"
	qScheduleDelete     = "schedule_delete"
	qScheduleAdvance    = "schedule_advance"
	qScheduleColumnsTpl = "schedule_columns"
)

// scheduleQueries are the schedule queries every dialect must have.
var scheduleQueries = []string{
	qScheduleInsert, qScheduleGet, qScheduleList, qScheduleListDue, qScheduleSetPaused, qScheduleDelete,
	qScheduleAdvance, qScheduleColumnsTpl,
}

// scheduleRow is a schedules row as the database returns it.
type scheduleRow struct {
	Name       string `db:"name"`
	Cron       string `db:"cron"`
	TZ         string `db:"tz"`
	Overlap    string `db:"overlap"`
	Paused     bool   `db:"paused"`
	Job        string `db:"job"`
	NextFireAt dbTime `db:"next_fire_at"`
	LastJobID  *int64 `db:"last_job_id"`
	Creator    string `db:"creator"`
	CreatedAt  dbTime `db:"created_at"`
	UpdatedAt  dbTime `db:"updated_at"`
}

func (r *scheduleRow) schedule() (*engine.Schedule, error) {
	s := &engine.Schedule{
		Name: r.Name, Cron: r.Cron, TZ: r.TZ, Overlap: engine.ScheduleOverlap(r.Overlap), Paused: r.Paused,
		NextFireAt: r.NextFireAt.Time, LastJobID: r.LastJobID, Creator: r.Creator,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	if err := json.Unmarshal([]byte(r.Job), &s.Job); err != nil {
		return nil, fmt.Errorf("schedule %s: stored job template is not valid JSON: %w", r.Name, err)
	}
	if s.Job.Args == nil {
		s.Job.Args = []string{}
	}
	return s, nil
}

func scheduleNotFound(name string) error {
	return &engine.NotFoundError{What: "schedule", ID: name}
}

// fireTime binds a fire time on the grid of stored timestamps, so the
// time read back is the very one stored and the guard of ScheduleAdvance
// compares equal (PostgreSQL would round a finer time, not truncate it).
func (s *Store) fireTime(t time.Time) any {
	return s.dialect.timeArg(t.Truncate(s.dialect.timeStep))
}

// ScheduleAdd stores a new schedule; ErrConflict when the name is taken.
func (s *Store) ScheduleAdd(ctx context.Context, p engine.ScheduleAddParams) (*engine.Schedule, error) {
	if err := engine.ValidateScheduleAdd(p); err != nil {
		return nil, err
	}
	tpl := p.Job
	if tpl.Args == nil {
		tpl.Args = []string{}
	}
	if strings.TrimSpace(string(tpl.Payload)) == "" {
		tpl.Payload = json.RawMessage("{}")
	}
	job, err := json.Marshal(tpl)
	if err != nil {
		return nil, err
	}
	a := args{
		"name": p.Name, "cron": p.Cron, "tz": p.TZ, "overlap": string(p.Overlap), "paused": p.Paused,
		"job": string(job), "next_fire_at": s.fireTime(p.NextFireAt), "creator": p.Creator,
	}
	var out *engine.Schedule
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.exec(ctx, tx, qScheduleInsert, a)
		if err != nil {
			return err
		}
		if n == 0 {
			return &engine.ScheduleExistsError{Name: p.Name}
		}
		out, err = s.scheduleGet(ctx, tx, p.Name)
		return err
	})
	if err != nil {
		var exists *engine.ScheduleExistsError
		if errors.As(err, &exists) {
			return nil, err
		}
		return nil, fmt.Errorf("add schedule %s: %w", p.Name, err)
	}
	return out, nil
}

// ScheduleGet returns the schedule, or a *NotFoundError.
func (s *Store) ScheduleGet(ctx context.Context, name string) (*engine.Schedule, error) {
	return s.scheduleGet(ctx, s.q, name)
}

func (s *Store) scheduleGet(ctx context.Context, q querier, name string) (*engine.Schedule, error) {
	var row scheduleRow
	if err := s.get(ctx, q, &row, qScheduleGet, args{"name": name}); err != nil {
		if isNoRows(err) {
			return nil, scheduleNotFound(name)
		}
		return nil, fmt.Errorf("read schedule %s: %w", name, err)
	}
	return row.schedule()
}

// ScheduleList returns every schedule ordered by name.
func (s *Store) ScheduleList(ctx context.Context) ([]*engine.Schedule, error) {
	return s.scheduleRows(ctx, qScheduleList, nil, "list schedules")
}

// ScheduleListDue returns the schedules due on the database clock,
// earliest first.
func (s *Store) ScheduleListDue(ctx context.Context, p engine.ScheduleDueParams) ([]*engine.Schedule, error) {
	return s.scheduleRows(ctx, qScheduleListDue, args{"limit": limitOrAll(p.Limit)}, "list due schedules")
}

func (s *Store) scheduleRows(ctx context.Context, name string, a args, what string) ([]*engine.Schedule, error) {
	var rows []scheduleRow
	if err := s.selectRows(ctx, s.q, &rows, name, a, false); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]*engine.Schedule, len(rows))
	for i := range rows {
		sc, err := rows[i].schedule()
		if err != nil {
			return nil, err
		}
		out[i] = sc
	}
	return out, nil
}

// ScheduleSetPaused pauses or resumes a schedule.
func (s *Store) ScheduleSetPaused(ctx context.Context, p engine.ScheduleSetPausedParams) (*engine.Schedule, error) {
	var next any
	if !p.NextFireAt.IsZero() {
		next = s.fireTime(p.NextFireAt)
	}
	var out *engine.Schedule
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.exec(ctx, tx, qScheduleSetPaused, args{"name": p.Name, "paused": p.Paused, "next_fire_at": next})
		if err != nil {
			return err
		}
		if n == 0 {
			return scheduleNotFound(p.Name)
		}
		out, err = s.scheduleGet(ctx, tx, p.Name)
		return err
	})
	if err != nil {
		verb := "resume"
		if p.Paused {
			verb = "pause"
		}
		return nil, fmt.Errorf("%s schedule %s: %w", verb, p.Name, err)
	}
	return out, nil
}

// ScheduleDelete removes a schedule; *NotFoundError for an unknown name.
func (s *Store) ScheduleDelete(ctx context.Context, name string) error {
	n, err := s.exec(ctx, s.q, qScheduleDelete, args{"name": name})
	if err != nil {
		return fmt.Errorf("remove schedule %s: %w", name, err)
	}
	if n == 0 {
		return scheduleNotFound(name)
	}
	return nil
}

// ScheduleAdvance moves a schedule past the fire at p.From, guarded by it.
func (s *Store) ScheduleAdvance(ctx context.Context, p engine.ScheduleAdvanceParams) (*engine.Schedule, error) {
	a := args{"name": p.Name, "from": s.fireTime(p.From), "next": s.fireTime(p.Next), "last_job_id": p.LastJobID}
	var out *engine.Schedule
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.exec(ctx, tx, qScheduleAdvance, a)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("it no longer fires at %s: %w", p.From.UTC().Format(time.RFC3339Nano), engine.ErrConflict)
		}
		out, err = s.scheduleGet(ctx, tx, p.Name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("advance schedule %s: %w", p.Name, err)
	}
	return out, nil
}

package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-shellwords"
)

// KeyPlace is the job's place in its key's order: its KeyPosition, or its
// own id when it has none. Jobs are submitted with none, so a key runs them
// in submission order; a rollback job takes the place of the job it undoes.
func (j *Job) KeyPlace() int64 {
	if j.KeyPosition != nil {
		return *j.KeyPosition
	}
	return j.ID
}

// KeyBefore reports whether j comes before o in their key's order: by
// place, then by id, so a rollback job comes right after the job it undoes
// and before every job submitted after that one.
func (j *Job) KeyBefore(o *Job) bool {
	if a, b := j.KeyPlace(), o.KeyPlace(); a != b {
		return a < b
	}
	return j.ID < o.ID
}

// RollbackPending reports whether the job failed finally and has a
// rollback spec whose job is yet to be created: it then still blocks the
// later jobs of its key, so the rollback runs before the key moves on.
func (j *Job) RollbackPending() bool {
	return j.Status == StatusFailed && j.Rollback != "" && j.RollbackJobID == nil
}

// RollbackArgs splits a rollback spec into the argv of its job, as a POSIX
// shell would split words: quotes and backslashes group and escape, and
// nothing else of a shell applies (no variables, no substitutions). The
// spec never reaches a shell, so an unquoted operator (; & | < >) is an
// error rather than something that silently ends the command.
func RollbackArgs(spec string) ([]string, error) {
	p := shellwords.NewParser()
	p.ParseEnv, p.ParseBacktick = false, false
	args, err := p.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("rollback %q does not split into words: unbalanced quotes or a trailing backslash", spec)
	}
	if p.Position >= 0 {
		return nil, fmt.Errorf("rollback %q has an unquoted shell operator at byte %d; it is not run by a shell, so quote it", spec, p.Position)
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("rollback %q has no words", spec)
	}
	return args, nil
}

// rollbackProblems are what ValidateJobInsert finds wrong with the rollback
// fields of a new job.
func rollbackProblems(p JobInsertParams) []string {
	var problems []string
	if p.Rollback != "" {
		if _, err := RollbackArgs(p.Rollback); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if problem := NameProblem("rollback type", p.RollbackType, false); problem != "" {
		problems = append(problems, problem)
	}
	if p.RollbackType != "" && p.Rollback == "" {
		problems = append(problems, "a rollback type is given without a rollback")
	}
	if p.KeyPosition != nil && *p.KeyPosition <= 0 {
		problems = append(problems, fmt.Sprintf("key position %d is not a job id", *p.KeyPosition))
	}
	if p.RollbackOf != nil && *p.RollbackOf <= 0 {
		problems = append(problems, fmt.Sprintf("rollback of %d is not a job id", *p.RollbackOf))
	}
	return problems
}

// ErrInsertManyPlace refuses a KeyPosition or RollbackOf in JobInsertMany:
// only the rollback step creates such jobs, one at a time.
var ErrInsertManyPlace = errors.New("key position and rollback of are set only by JobInsert")

// RollbackInsert is the rollback job of a job that failed finally: it runs
// the split spec once (max attempts 1) as the rollback type, with the same
// key, place, load and priority, so it runs after the failed job and before every
// later job of the key. The job's timeout bounds its rollback too: undoing
// work should take no longer than doing it.
func RollbackInsert(f *Job) (JobInsertParams, error) {
	args, err := RollbackArgs(f.Rollback)
	if err != nil {
		return JobInsertParams{}, fmt.Errorf("job %d: %w", f.ID, err)
	}
	typ := f.RollbackType
	if typ == "" {
		typ = f.Type
	}
	return JobInsertParams{
		Type: typ, Operation: fmt.Sprintf("rollback of %d", f.ID), Args: args, Load: f.Load, Priority: f.Priority,
		Status: StatusQueued, Key: f.Key, MaxAttempts: 1, Timeout: cmp.Or(time.Duration(f.Timeout), DefaultJobTimeout), Creator: f.Creator,
		KeyPosition: Ptr(f.KeyPlace()), RollbackOf: Ptr(f.ID),
	}, nil
}

// RollbackSpawnBatch is how many rollback jobs SpawnRollbacks creates at
// most in one call; the rest wait for the next round.
const RollbackSpawnBatch = 100

// RollbackStore is what SpawnRollbacks needs of a store.
type RollbackStore interface {
	Transactor
	JobListRollbackPending(ctx context.Context, limit int) ([]*Job, error)
}

// SpawnRollbacks creates the rollback job of every job that failed finally
// with a rollback spec and has none yet. The lease holder calls it every
// round. Each job's rollback is inserted and recorded on the failed job in
// one transaction, the record guarded by the job's status and version and
// by its having no rollback job, so two holders (or a holder and the one
// after a failover) create one rollback job between them: the loser's
// transaction rolls back with its insert. It returns the jobs created; a
// spec that cannot become a job is reported and the others go on.
func SpawnRollbacks(ctx context.Context, s RollbackStore) ([]*Job, error) {
	pending, err := s.JobListRollbackPending(ctx, RollbackSpawnBatch)
	if err != nil {
		return nil, fmt.Errorf("list jobs awaiting their rollback: %w", err)
	}
	var created []*Job
	var errs []error
	for _, f := range pending {
		p, err := RollbackInsert(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var job *Job
		err = s.Tx(ctx, func(tx TxStore) error {
			var err error
			if job, err = tx.JobInsert(ctx, p); err != nil {
				return err
			}
			_, err = tx.JobRollbackSet(ctx, JobRollbackSetParams{ID: f.ID, Version: f.Version, RollbackJobID: job.ID})
			return err
		})
		switch {
		case errors.Is(err, ErrConflict):
			// Another holder created it, or the job was requeued or deleted.
		case err != nil:
			errs = append(errs, fmt.Errorf("create the rollback of job %d: %w", f.ID, err))
		default:
			created = append(created, job)
		}
	}
	return created, errors.Join(errs...)
}

// MarkDoubleFaults sets DoubleFault on each job whose rollback job ended
// FAILED, reading those rollback jobs from s. A rollback job that is gone
// (pruned) counts as none.
func MarkDoubleFaults(ctx context.Context, s JobGetter, jobs []*Job) error {
	for _, j := range jobs {
		if j.RollbackJobID == nil {
			continue
		}
		r, err := s.JobGet(ctx, *j.RollbackJobID)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return err
		}
		j.DoubleFault = r.Status == StatusFailed
	}
	return nil
}

package dbstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// qJobAttemptList reads the rows the triggers of migrations 009 to 016
// write when an attempt ends, with the final attempt an ended job keeps on
// its own row (job_final_attempts); qJobPurgeAttempts removes those of
// purged jobs.
const (
	qJobAttemptList      = "job_attempt_list"
	qJobAttemptUsageList = "job_attempt_usage_list"
	qJobAttemptUsageType = "job_attempt_usage_type"
	qJobPurgeAttempts    = "job_purge_attempts"
)

type attemptRow struct {
	Attempt   int           `db:"attempt"`
	Node      string        `db:"node"`
	StartedAt dbTime        `db:"started_at"`
	EndedAt   dbTime        `db:"ended_at"`
	ExitCode  sql.NullInt64 `db:"exit_code"`
	Ending    string        `db:"ending"`
	Message   string        `db:"message"`
	usageColumns
}

// JobAttemptList returns the ended attempts of a job, oldest first; see
// engine.TxStore.
func (s *Store) JobAttemptList(ctx context.Context, jobID int64) ([]engine.Attempt, error) {
	var rows []attemptRow
	if err := s.selectRows(ctx, s.q, &rows, qJobAttemptList, args{"job_id": jobID}, false); err != nil {
		return nil, fmt.Errorf("list the attempts of job %d: %w", jobID, err)
	}
	out := make([]engine.Attempt, len(rows))
	for i, r := range rows {
		out[i] = engine.Attempt{
			JobID: jobID, Attempt: r.Attempt, Node: r.Node, StartedAt: r.StartedAt.ptr(), EndedAt: r.EndedAt.ptr(),
			Ending: engine.Status(r.Ending), Message: r.Message, Usage: r.usage(),
		}
		if r.ExitCode.Valid {
			out[i].ExitCode = engine.Ptr(int(r.ExitCode.Int64))
		}
	}
	return out, nil
}

// JobAttemptUsageList returns the newest measured attempts of each type;
// see engine.Store.
func (s *Store) JobAttemptUsageList(ctx context.Context, p engine.JobAttemptUsageParams) ([]engine.AttemptUsage, error) {
	if p.Runs < 1 {
		return nil, fmt.Errorf("list attempt usage: runs %d is not at least 1", p.Runs)
	}
	var rows []attemptUsageRow
	if len(p.Types) == 0 {
		a := args{"runs": p.Runs}
		if err := s.selectRows(ctx, s.q, &rows, qJobAttemptUsageList, a, false); err != nil {
			return nil, fmt.Errorf("list attempt usage: %w", err)
		}
	}
	// Named types: one read down the index each, however long the table.
	for _, typ := range slices.Compact(slices.Sorted(slices.Values(p.Types))) {
		var some []attemptUsageRow
		if err := s.selectRows(ctx, s.q, &some, qJobAttemptUsageType, args{"job_type": typ, "runs": p.Runs}, false); err != nil {
			return nil, fmt.Errorf("list attempt usage of type %s: %w", typ, err)
		}
		rows = append(rows, some...)
	}
	out := make([]engine.AttemptUsage, 0, len(rows))
	for _, r := range rows {
		u := r.usage()
		if u == nil {
			continue
		}
		out = append(out, engine.AttemptUsage{JobID: r.JobID, Attempt: r.Attempt, Type: r.Type, Load: r.Load,
			EndedAt: r.EndedAt.Time, Usage: *u})
	}
	return out, nil
}

type attemptUsageRow struct {
	JobID   int64   `db:"job_id"`
	Attempt int     `db:"attempt"`
	Type    string  `db:"job_type"`
	Load    float64 `db:"job_load"`
	EndedAt dbTime  `db:"ended_at"`
	usageColumns
}

// purgeAttempts removes the attempts of the jobs of ids that a purge has
// just deleted, in its transaction.
func (s *Store) purgeAttempts(ctx context.Context, tx *sqlx.Tx, ids []int64) error {
	query, params, err := s.bind(tx, qJobPurgeAttempts, args{"ids": ids}, true)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, query, params...)
	return err
}

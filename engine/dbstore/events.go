package dbstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// Query names of the events table (migration 011).
const (
	qEventColumns         = "event_columns"
	qEventAppend          = "event_append"
	qEventAppendJobs      = "event_append_jobs"
	qEventList            = "event_list"
	qEventListJob         = "event_list_job"
	qEventListNode        = "event_list_node"
	qEventListRest        = "event_list_rest"
	qEventListSince       = "event_list_since"
	qEventPurgeCandidates = "event_purge_candidates"
	qEventDelete          = "event_delete"
	qJobPurgeEvents       = "job_purge_events"
)

// eventQueries are the event queries every dialect must have.
var eventQueries = []string{
	qEventColumns, qEventAppend, qEventAppendJobs, qEventList, qEventListJob, qEventListNode, qEventListRest,
	qEventListSince, qEventPurgeCandidates, qEventDelete, qJobPurgeEvents,
}

type eventRow struct {
	ID        int64  `db:"id"`
	CreatedAt dbTime `db:"created_at"`
	Who       string `db:"who"`
	Verb      string `db:"verb"`
	JobID     *int64 `db:"job_id"`
	Node      string `db:"node"`
	Type      string `db:"type"`
	Schedule  string `db:"schedule"`
	Detail    string `db:"detail"`
	Reason    string `db:"reason"`
}

// EventAppend records the events of one change; see engine.TxStore. The
// events of jobs are one INSERT … SELECT per chunk of ids, which also
// finds a job that does not exist: the whole append is then undone.
func (s *Store) EventAppend(ctx context.Context, p engine.EventAppendParams) error {
	if err := engine.ValidateEventAppend(p); err != nil {
		return err
	}
	a := args{"who": p.Who, "verb": p.Verb, "node": p.Node, "type": p.Type, "schedule": p.Schedule,
		"detail": p.Detail, "reason": p.Reason}
	if len(p.JobIDs) == 0 {
		if _, err := s.exec(ctx, s.q, qEventAppend, a); err != nil {
			return fmt.Errorf("record event %s: %w", p.Verb, err)
		}
		return nil
	}
	ids := slices.Compact(slices.Sorted(slices.Values(p.JobIDs)))
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		for chunk := range slices.Chunk(ids, idChunk) {
			a["ids"] = chunk
			query, params, err := s.bind(tx, qEventAppendJobs, a, true)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, query, params...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if int(n) < len(chunk) {
				// Which one is missing, as JobInsert words it.
				if err := s.jobsMustExist(ctx, tx, chunk); err != nil {
					return err
				}
				return fmt.Errorf("recorded %d events for %d jobs", n, len(chunk))
			}
		}
		return nil
	})
	if err != nil {
		if isDomainError(err) {
			return err
		}
		return fmt.Errorf("record event %s: %w", p.Verb, err)
	}
	return nil
}

// EventList returns the matching events oldest first; see engine.TxStore.
func (s *Store) EventList(ctx context.Context, p engine.EventListParams) ([]engine.Event, error) {
	a := args{
		"any_since": p.Since == nil, "since": s.windowArg(p.Since, true),
		"after_id": p.AfterID,
		"limit":    limitOrAll(p.Limit),
	}
	query := qEventList
	switch {
	case p.JobID != nil:
		query, a["job_id"], a["node"] = qEventListJob, *p.JobID, p.Node
	case p.Node != "":
		query, a["node"] = qEventListNode, p.Node
	case p.Since != nil:
		query = qEventListSince
	}
	var rows []eventRow
	if err := s.selectRows(ctx, s.q, &rows, query, a, false); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out := make([]engine.Event, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = engine.Event{
			ID: r.ID, At: r.CreatedAt.Time, Who: r.Who, Verb: r.Verb, JobID: r.JobID, Node: r.Node, Type: r.Type,
			Schedule: r.Schedule, Detail: r.Detail, Reason: r.Reason,
		}
	}
	return out, nil
}

// EventPurge removes old events naming no job; see engine.Store.
func (s *Store) EventPurge(ctx context.Context, p engine.EventPurgeParams) (int, error) {
	if p.Limit < 0 {
		return 0, &engine.InvalidError{What: "event purge", Problems: []string{fmt.Sprintf("limit %d is negative", p.Limit)}}
	}
	a := args{"before": s.dialect.timeArg(p.Before.Truncate(s.dialect.timeStep)), "limit": limitOrAll(p.Limit)}
	if p.Before.IsZero() {
		a["before"] = s.dialect.timeArg(time.Unix(0, 0))
	}
	removed := 0
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		removed = 0
		var ids []int64
		if err := s.selectRows(ctx, tx, &ids, qEventPurgeCandidates, a, false); err != nil {
			return err
		}
		if p.DryRun {
			removed = len(ids)
			return nil
		}
		for chunk := range slices.Chunk(ids, idChunk) {
			n, err := s.execIn(ctx, tx, qEventDelete, args{"ids": chunk})
			if err != nil {
				return err
			}
			removed += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("purge events: %w", err)
	}
	return removed, nil
}

// purgeEvents removes the events of the jobs of ids that a purge has just
// deleted, in its transaction.
func (s *Store) purgeEvents(ctx context.Context, tx *sqlx.Tx, ids []int64) error {
	_, err := s.execIn(ctx, tx, qJobPurgeEvents, args{"ids": ids})
	return err
}

// execIn runs a statement whose list parameters expand for "x IN (:list)"
// in tx and returns how many rows it changed.
func (s *Store) execIn(ctx context.Context, tx *sqlx.Tx, name string, a args) (int64, error) {
	query, params, err := s.bind(tx, name, a, true)
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, query, params...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

package dbstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// Limits of one multi-row INSERT. Rows: well within every backend's limit
// on parameters (15 a row; SQLite allows 32766, the others 65535), and
// measured: SQLite parses a statement of 1000 rows several times slower per
// row than one of 100, and more rows per statement saved PostgreSQL
// nothing. Bytes: a statement fits MySQL's default max_allowed_packet
// however large the payloads.
const (
	insertManyRows  = 100
	insertManyBytes = 4 << 20
)

// insertArrayRows is how many rows one job_insert_arrays statement takes
// (PostgreSQL): its text stays the same whatever the count.
const insertArrayRows = 1000

// idChunk is how many ids one "id IN (…)" list holds.
const idChunk = 500

// JobInsertMany creates the jobs in one transaction, a multi-row INSERT per
// chunk; see engine.Store. Every job is validated and every parent checked
// before anything is written.
func (s *Store) JobInsertMany(ctx context.Context, ps []engine.JobInsertParams) ([]int64, error) {
	rows := make([]insertRow, len(ps))
	parents := map[int64]bool{}
	for i, p := range ps {
		row, err := s.jobInsertRow(p)
		if err != nil {
			return nil, atIndex(err, i)
		}
		if p.KeyPosition != nil || p.RollbackOf != nil {
			// The multi-row statements leave both columns NULL.
			return nil, atIndex(engine.ErrInsertManyPlace, i)
		}
		rows[i] = row
		if p.ParentID != nil {
			parents[*p.ParentID] = true
		}
	}
	if len(ps) == 0 {
		return []int64{}, nil
	}
	var ids []int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		ids = make([]int64, 0, len(ps))
		// Checking the parents also takes the transaction's snapshot before
		// the first INSERT, which MySQL's reading back of the ids needs.
		if err := s.jobsMustExist(ctx, tx, slices.Sorted(maps.Keys(parents))); err != nil {
			return err
		}
		insert, perStatement := s.insertArrays(tx), insertArrayRows
		if !s.dialect.sendsArrays {
			ri, err := s.newRowInserter(tx)
			if err != nil {
				return err
			}
			defer ri.close()
			insert, perStatement = ri.insert, insertManyRows
		}
		for todo := rows; len(todo) > 0; {
			n, size := 0, 0
			for n < len(todo) && n < perStatement && (n == 0 || size+rowBytes(todo[n]) <= insertManyBytes) {
				size += rowBytes(todo[n])
				n++
			}
			chunk, err := insert(ctx, todo[:n])
			if err != nil {
				return err
			}
			ids = append(ids, chunk...)
			todo = todo[n:]
		}
		return nil
	})
	if err != nil {
		if isDomainError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("insert %d jobs: %w", len(ps), err)
	}
	if s.dialect.name == "postgres" && s.analyzeDue(len(ps)) {
		s.refreshStatistics(ctx)
	}
	for _, p := range ps {
		if p.Status.Wakes() {
			s.wake()
			break
		}
	}
	return ids, nil
}

// purgeCandidates reads the jobs a purge may remove, the window of those
// that ended first (0: all), in that order, and the parents that children
// outside them pin; full reports that every candidate was read, and last
// is the place of the last one read.
func (s *Store) purgeCandidates(ctx context.Context, tx *sqlx.Tx, query string, a args, window int) (list []engine.PurgeCandidate, pinned []int64, full bool, last *engine.PurgePosition, err error) {
	a["limit"] = limitOrAll(window)
	var candidates []struct {
		ID         int64  `db:"id"`
		ParentID   *int64 `db:"parent_id"`
		FinishedAt dbTime `db:"finished_at"`
	}
	if err := s.selectRows(ctx, tx, &candidates, query, a, true); err != nil {
		return nil, nil, false, nil, err
	}
	full = window <= 0 || len(candidates) < window
	if len(candidates) == 0 {
		return nil, nil, full, nil, nil
	}
	if c := candidates[len(candidates)-1]; c.FinishedAt.Valid {
		last = &engine.PurgePosition{EndedAt: c.FinishedAt.Time, ID: c.ID}
	}
	type child struct {
		ID       int64 `db:"id"`
		ParentID int64 `db:"parent_id"`
	}
	var children []child
	ids := make([]int64, len(candidates))
	for i, c := range candidates {
		ids[i] = c.ID
	}
	for chunk := range slices.Chunk(ids, idChunk) {
		var some []child
		if err := s.selectRows(ctx, tx, &some, qJobPurgeChildrenOf, args{"ids": chunk}, true); err != nil {
			return nil, nil, false, nil, err
		}
		children = append(children, some...)
	}
	isCandidate := make(map[int64]bool, len(candidates))
	list = make([]engine.PurgeCandidate, len(candidates))
	for i, c := range candidates {
		isCandidate[c.ID] = true
		list[i] = engine.PurgeCandidate{ID: c.ID, ParentID: c.ParentID}
	}
	for _, c := range children {
		if !isCandidate[c.ID] {
			pinned = append(pinned, c.ParentID)
		}
	}
	return list, pinned, full, last, nil
}

// purgeCandidatesQuery is the variant of job_purge_candidates
// (queryVariants) for p: with its bounds on the end time and the ids in
// the text, and without the ones it does not have.
func purgeCandidatesQuery(p engine.JobPurgeParams) string {
	var words []string
	if p.FinishedBefore != nil {
		words = append(words, "before")
	}
	if p.MinID > 0 || p.MaxID > 0 {
		words = append(words, "range")
	}
	if p.After != nil {
		words = append(words, "after")
	}
	return variantName(qJobPurgeCandidates, strings.Join(words, " "))
}

// analyzeAfterRows: once this process has inserted this many jobs in bulk,
// the planner's statistics of the jobs table are refreshed on PostgreSQL,
// and again each time the count doubles. A benchmark or a --batch file
// inserts a thousand at a time, so one call alone never got there; the
// doubling keeps what the refreshes cost to a few, however many go in.
const analyzeAfterRows = 10000

// refreshSampleTarget is the statistics target of the refreshes that bulk
// inserts make: PostgreSQL samples 300 rows a unit of it. What the planner
// needs from them is how many rows the table holds and how they split
// across statuses and types, which 3,000 rows tell; the default sample of
// 30,000 made each refresh of a table of a few hundred thousand jobs read
// ten times as much, a third of a second of the database's CPU each time.
const refreshSampleTarget = 10

// refreshStatistics refreshes the planner's statistics of the jobs table on
// PostgreSQL, from a small sample (refreshSampleTarget). The planner would
// otherwise go on believing the queue short until autovacuum next looks at
// the table, and read a long queue through a bitmap scan and a sort
// instead of in index order, many times slower per dispatch page. Only the
// table's owner may analyze it; for others this is a warning, and the
// figures stay.
func (s *Store) refreshStatistics(ctx context.Context) {
	_ = s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL default_statistics_target = %d", refreshSampleTarget)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "ANALYZE jobs")
		return err
	})
}

// analyzeDue counts n jobs inserted in bulk and reports whether the
// statistics are due for a refresh.
func (s *Store) analyzeDue(n int) bool {
	total := s.bulkInserted.Add(int64(n))
	for {
		stored := s.nextAnalyze.Load()
		next := stored
		if next == 0 {
			next = analyzeAfterRows
		}
		if total < next {
			return false
		}
		if s.nextAnalyze.CompareAndSwap(stored, 2*total) {
			return true
		}
	}
}

// atIndex names the element of a batch an *InvalidError is about.
func atIndex(err error, i int) error {
	var inv *engine.InvalidError
	if errors.As(err, &inv) {
		return &engine.InvalidError{What: fmt.Sprintf("%s at index %d", inv.What, i), Problems: inv.Problems}
	}
	return fmt.Errorf("job at index %d: %w", i, err)
}

// rowBytes is the bulk of one row's parameters: its texts.
func rowBytes(r insertRow) int {
	return len(r.args) + len(r.payload) + len(r.rollback)
}

// jobsMustExist returns a *NotFoundError (as JobInsert words it) for the
// first of ids that names no job.
func (s *Store) jobsMustExist(ctx context.Context, q querier, ids []int64) error {
	if len(ids) == 0 {
		// No parent to look for; still read the table once, for the snapshot.
		return s.get(ctx, q, new(int64), qJobExists, args{"id": 0})
	}
	for chunk := range slices.Chunk(ids, idChunk) {
		var found []int64
		if err := s.selectRows(ctx, q, &found, qJobIDsExisting, args{"ids": chunk}, true); err != nil {
			return err
		}
		for _, id := range chunk {
			if !slices.Contains(found, id) {
				return fmt.Errorf("parent %w", jobNotFound(id))
			}
		}
	}
	return nil
}

// insertArrays returns the insert of one chunk of rows through
// job_insert_arrays, in tx.
func (s *Store) insertArrays(tx *sqlx.Tx) func(ctx context.Context, rows []insertRow) ([]int64, error) {
	return func(ctx context.Context, rows []insertRow) ([]int64, error) {
		var ids []int64
		if err := s.selectRows(ctx, tx, &ids, qJobInsertArrays, jobInsertArrays(rows), false); err != nil {
			return nil, err
		}
		if len(ids) != len(rows) {
			return nil, fmt.Errorf("inserted %d jobs but got %d ids back", len(rows), len(ids))
		}
		return ids, nil
	}
}

// rowInserter runs the multi-row INSERTs of one JobInsertMany. The
// statement of a full chunk is prepared once and reused: parsing a
// statement of many rows costs as much as running it.
type rowInserter struct {
	s          *Store
	tx         *sqlx.Tx
	head, tail string   // the statement around its rows
	row        string   // one row, with positional parameters
	names      []string // the row's parameters in order
	full       *sqlx.Stmt
}

// newRowInserter prepares the INSERTs of rows of job_insert_row.
func (s *Store) newRowInserter(tx *sqlx.Tx) (*rowInserter, error) {
	// job_insert_many holds the row once; the statement repeats it.
	row := s.queries[qJobInsertRow]
	head, tail, ok := strings.Cut(s.queries[qJobInsertMany].question, row.question)
	if !ok {
		return nil, fmt.Errorf("query %s does not include %s", qJobInsertMany, qJobInsertRow)
	}
	return &rowInserter{s: s, tx: tx, head: head, tail: tail, row: row.question, names: row.names}, nil
}

func (ri *rowInserter) statement(n int) string {
	var b strings.Builder
	b.WriteString(ri.head)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(ri.row)
	}
	b.WriteString(ri.tail)
	return ri.tx.Rebind(b.String())
}

func (ri *rowInserter) close() {
	if ri.full != nil {
		_ = ri.full.Close()
	}
}

// insert runs one multi-row INSERT and returns the new ids in the order of
// rows.
func (ri *rowInserter) insert(ctx context.Context, rows []insertRow) ([]int64, error) {
	params := make([]any, 0, len(rows)*len(ri.names))
	for _, r := range rows {
		a := r.params()
		for _, name := range ri.names {
			params = append(params, a[name])
		}
	}
	var stmt *sqlx.Stmt
	if len(rows) == insertManyRows {
		if ri.full == nil {
			prepared, err := ri.tx.PreparexContext(ctx, ri.statement(insertManyRows))
			if err != nil {
				return nil, err
			}
			ri.full = prepared
		}
		stmt = ri.full
	}
	query := ""
	if stmt == nil {
		query = ri.statement(len(rows))
	}

	if ri.s.dialect.insertReturnsID {
		var ids []int64
		var err error
		if stmt != nil {
			err = stmt.SelectContext(ctx, &ids, params...)
		} else {
			err = sqlx.SelectContext(ctx, ri.tx, &ids, query, params...)
		}
		if err != nil {
			return nil, err
		}
		if len(ids) != len(rows) {
			return nil, fmt.Errorf("inserted %d jobs but got %d ids back", len(rows), len(ids))
		}
		slices.Sort(ids)
		return ids, nil
	}
	var res sql.Result
	var err error
	if stmt != nil {
		res, err = stmt.ExecContext(ctx, params...)
	} else {
		res, err = ri.tx.ExecContext(ctx, query, params...)
	}
	if err != nil {
		return nil, err
	}
	first, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	var ids []int64
	if err := ri.s.selectRows(ctx, ri.tx, &ids, qJobIDsFrom, args{"first_id": first, "n": len(rows)}, false); err != nil {
		return nil, err
	}
	if len(ids) != len(rows) {
		return nil, fmt.Errorf("inserted %d jobs but found %d of them", len(rows), len(ids))
	}
	return ids, nil
}

// JobCountByStatus counts the jobs matching p per status; see engine.Store.
func (s *Store) JobCountByStatus(ctx context.Context, p engine.JobListParams) (map[engine.Status]int, error) {
	counts := s.jobCounts(p)
	out := map[engine.Status]int{}
	err := s.inSnapshot(ctx, len(counts) > 1, func(q querier) error {
		for _, c := range counts {
			var rows []struct {
				Status string `db:"status"`
				N      int    `db:"n"`
			}
			if err := s.selectRows(ctx, q, &rows, c.name, c.args, true); err != nil {
				return err
			}
			for _, r := range rows {
				out[engine.Status(r.Status)] += r.N
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}

// JobTimes returns the status and times of every job matching p's filters,
// in no order; p's Limit, Sort and Brief play no part. It reads four
// columns of each row, where JobList would read and convert them all.
func (s *Store) JobTimes(ctx context.Context, p engine.JobListParams) ([]engine.JobTimes, error) {
	var rows []struct {
		Status     string `db:"status"`
		CreatedAt  dbTime `db:"created_at"`
		StartedAt  dbTime `db:"started_at"`
		FinishedAt dbTime `db:"finished_at"`
	}
	if err := s.selectRows(ctx, s.q, &rows, qJobTimes, s.jobListArgs(p), true); err != nil {
		return nil, fmt.Errorf("read the times of jobs: %w", err)
	}
	out := make([]engine.JobTimes, len(rows))
	for i, r := range rows {
		out[i] = engine.JobTimes{Status: engine.Status(r.Status), CreatedAt: r.CreatedAt.Time,
			StartedAt: r.StartedAt.ptr(), FinishedAt: r.FinishedAt.ptr()}
	}
	return out, nil
}

// jobCount is one statement of a count by status.
type jobCount struct {
	name string
	args args
}

// jobCounts are the statements that count the jobs matching p. Live
// statuses alone are counted through the indexes of live jobs, with the
// status term standing alone (job_count_live_by_status), one statement for
// each part of liveParts, so a count of a queue's progress costs what is
// live, not the table's history of ended jobs.
func (s *Store) jobCounts(p engine.JobListParams) []jobCount {
	if !liveOnly(p.Statuses) {
		return []jobCount{{qJobCountByStatus, s.jobListArgs(p)}}
	}
	var counts []jobCount
	for _, part := range s.liveParts(p.Statuses) {
		q := p
		q.Statuses = part
		counts = append(counts, jobCount{qJobCountLiveByStatus, s.jobListArgs(q)})
	}
	return counts
}

// inSnapshot runs fn on a querier that sees one snapshot of the database
// for all its statements when apart is set (a read-only repeatable-read
// transaction), so that a job moving between the parts of a count or a
// listing meanwhile is seen once, as one statement would; else on the
// store's own querier.
func (s *Store) inSnapshot(ctx context.Context, apart bool, fn func(q querier) error) error {
	if !apart || s.tx != nil {
		return fn(s.q)
	}
	tx, err := s.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// liveParts splits live statuses by the index of live jobs that holds
// them where the dialect keeps them apart (liveIndexesApart): the queue
// statuses and the other live ones, empty parts left out. Elsewhere they
// are one part.
func (s *Store) liveParts(statuses []engine.Status) [][]engine.Status {
	if !s.dialect.liveIndexesApart {
		return [][]engine.Status{statuses}
	}
	var queue, rest []engine.Status
	for _, st := range statuses {
		if slices.Contains(engine.DispatchableStatuses, st) {
			queue = append(queue, st)
		} else {
			rest = append(rest, st)
		}
	}
	return slices.DeleteFunc([][]engine.Status{queue, rest}, func(part []engine.Status) bool { return len(part) == 0 })
}

// JobPurge removes the ended jobs p.Choose picks in one transaction; see
// engine.Store. The jobs are deleted children first, and the delete checks each
// status again, so a job requeued meanwhile stays. Should a child be
// requeued or submitted under a chosen parent at that very moment, the
// schema's ON DELETE SET NULL makes it a root job rather than leave it
// naming a job that is gone. A dry run only reads.
func (s *Store) JobPurge(ctx context.Context, p engine.JobPurgeParams) (engine.JobPurgeResult, error) {
	statuses, err := engine.PurgeStatuses(p)
	if err != nil {
		return engine.JobPurgeResult{}, err
	}
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	a := args{"statuses": names, "creator": p.Creator, "min_id": p.MinID, "max_id": maxIDArg(p.MaxID)}
	if p.FinishedBefore != nil {
		a["finished_before"] = s.dialect.timeArg(*p.FinishedBefore)
	}
	if p.After != nil {
		a["after_ended_at"], a["after_id"] = s.dialect.timeArg(p.After.EndedAt), p.After.ID
	}
	query := purgeCandidatesQuery(p)
	var res engine.JobPurgeResult
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		res = engine.JobPurgeResult{}
		if s.dialect.purgeByIndex != "" {
			if _, err := tx.ExecContext(ctx, s.dialect.purgeByIndex); err != nil {
				return err
			}
		}
		// With a limit, the Limit candidates that ended first and their
		// children are read, not every candidate: through the index of
		// ended jobs a purge in batches then costs each batch its own
		// size. A window that removes nothing (every job in it keeps a
		// parent with a child outside) is read again whole, so the purge
		// always moves on.
		list, pinned, full, last, err := s.purgeCandidates(ctx, tx, query, a, p.Limit)
		if err != nil {
			return err
		}
		if !full && p.MinID == 0 && p.MaxID == 0 {
			res.Next = last
		}
		doomed := p.Choose(list, pinned, p.Limit)
		if len(doomed) == 0 && !full {
			if list, pinned, _, _, err = s.purgeCandidates(ctx, tx, query, a, 0); err != nil {
				return err
			}
			doomed = p.Choose(list, pinned, p.Limit)
		}
		if p.DryRun {
			res.Removed = len(doomed)
			return nil
		}
		slices.Reverse(doomed) // children first: no parent_id to clear on the way
		for chunk := range slices.Chunk(doomed, idChunk) {
			n, err := s.purgeChunk(ctx, tx, chunk)
			if err != nil {
				return err
			}
			res.Removed += n
		}
		return nil
	})
	if err != nil {
		return engine.JobPurgeResult{}, fmt.Errorf("purge jobs: %w", err)
	}
	return res, nil
}

// purgeChunk deletes the jobs of ids that are still ended, with their
// attempts and events, and returns how many went. Where a DELETE returns
// the rows it removed, the attempts and events deleted are exactly theirs,
// found by the indexes on job_id; elsewhere job_purge_attempts and
// job_purge_events check each job is gone.
func (s *Store) purgeChunk(ctx context.Context, tx *sqlx.Tx, ids []int64) (int, error) {
	var removed int
	if s.dialect.deleteReturns {
		var gone []int64
		if err := s.selectRows(ctx, tx, &gone, qJobPurgeDelete, args{"ids": ids}, true); err != nil {
			return 0, err
		}
		if len(gone) == 0 {
			return 0, nil
		}
		ids, removed = gone, len(gone)
	} else {
		n, err := s.execIn(ctx, tx, qJobPurgeDelete, args{"ids": ids})
		if err != nil {
			return 0, err
		}
		removed = int(n)
	}
	if err := s.purgeAttempts(ctx, tx, ids); err != nil {
		return 0, err
	}
	if err := s.purgeEvents(ctx, tx, ids); err != nil {
		return 0, err
	}
	return removed, nil
}

// NodeRemove deletes the node's row, while it is still as the caller read
// it (p.Process, last seen no later than p.LastSeen), and the reservations
// kept on it; see engine.Store.
func (s *Store) NodeRemove(ctx context.Context, p engine.NodeRemoveParams) error {
	a := args{"name": p.Name, "host_id": p.Process.Host, "pid": p.Process.PID, "proc_start": p.Process.StartTime,
		"last_seen": s.dialect.timeArg(p.LastSeen)}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.exec(ctx, tx, qNodeRemove, a)
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := s.nodeGet(ctx, tx, p.Name); err != nil {
				return err
			}
			return fmt.Errorf("remove node %s: its row changed since it was read: %w", p.Name, engine.ErrConflict)
		}
		_, err = s.exec(ctx, tx, qReservationDeleteNode, args{"node": p.Name})
		return err
	})
	if err != nil {
		if isDomainError(err) {
			return err
		}
		return fmt.Errorf("remove node %s: %w", p.Name, err)
	}
	return nil
}

package dbstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// jobUpdateChunk is the most transitions one statement carries: a
// dispatcher's page fits in one, and the parameters and statement stay far
// below every backend's limits.
const jobUpdateChunk = 2000

// maxRunAfterSeconds bounds RunAfterSeconds: about 317 years, past which
// the backends' timestamps overflow (and a time.Duration too).
const maxRunAfterSeconds = 1e10

// readBack is what a batch of transitions reads back of the jobs it
// changed.
type readBack int

const (
	readWhole   readBack = iota // every field (JobUpdateMany)
	readStarted                 // what a node runs a job by (JobStartMany)
	readIDs                     // which jobs changed, no fields (JobUpdateManyQuiet)
)

// statements are the job_update_many statements that read back what r
// asks for: the one whose UPDATE returns it, and the read after a locked
// update where UPDATE returns no rows (none for readIDs).
func (r readBack) statements() (returning, lockedRead string) {
	switch r {
	case readStarted:
		return qJobUpdateManyStarted, qJobUpdateManyReadStarted
	case readIDs:
		return qJobUpdateManyIDs, ""
	}
	return qJobUpdateMany, qJobUpdateManyRead
}

// JobUpdateMany applies many guarded transitions; see engine.Store. Each
// chunk of jobUpdateChunk transitions is one statement where the backend
// has UPDATE … RETURNING, and a batch of one chunk runs without a
// transaction of its own; MySQL locks, updates and reads back each chunk
// in one transaction. A transition that is invalid on its own is refused
// before anything is sent.
func (s *Store) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	return s.jobUpdateMany(ctx, us, readWhole)
}

// JobUpdateManyQuiet is JobUpdateMany without reading the jobs back; see
// engine.Store.
func (s *Store) JobUpdateManyQuiet(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	return s.jobUpdateMany(ctx, us, readIDs)
}

// JobStartMany is JobUpdateMany reading back only what a node runs each
// job by; see engine.Store.
func (s *Store) JobStartMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	return s.jobUpdateMany(ctx, us, readStarted)
}

// jobUpdateMany applies the transitions and reads back what read asks
// for; readIDs leaves the results' Job nil.
func (s *Store) jobUpdateMany(ctx context.Context, us []engine.JobUpdate, read readBack) ([]engine.JobUpdateResult, error) {
	out := make([]engine.JobUpdateResult, len(us))
	send, err := checkJobUpdates(us, out)
	if err != nil {
		return nil, fmt.Errorf("update %d jobs: %w", len(us), err)
	}
	if len(send) == 0 {
		return out, nil
	}
	var changed map[int64]*engine.Job
	apply := func(q querier) error {
		changed = make(map[int64]*engine.Job, len(send))
		for chunk := range slices.Chunk(send, jobUpdateChunk) {
			if err := s.jobUpdateChunk(ctx, q, chunk, changed, read); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.keepStatements(ctx); err != nil {
		return nil, fmt.Errorf("update %d jobs: %w", len(us), err)
	}
	if s.dialect.updateReturns && len(send) <= jobUpdateChunk {
		// One statement is atomic on its own: no BEGIN and COMMIT to wait for.
		err = s.retryDeadlock(ctx, func() error { return apply(s.q) })
	} else {
		err = s.inTx(ctx, func(tx *sqlx.Tx) error { return apply(tx) })
		// The starts under a term that lapsed were undone with the rest of
		// the transaction: refuse them and apply the rest again. Terms
		// never come back, so this ends.
		var lapsed *lapsedTermsError
		for s.tx == nil && errors.As(err, &lapsed) {
			send = refuseLapsedStarts(us, send, lapsed.terms, out)
			if len(send) == 0 {
				return out, nil
			}
			err = s.inTx(ctx, func(tx *sqlx.Tx) error { return apply(tx) })
		}
	}
	if err != nil {
		return nil, fmt.Errorf("update %d jobs: %w", len(us), err)
	}
	for i, u := range us {
		if out[i].Err != nil {
			continue
		}
		if job, ok := changed[u.ID]; ok {
			out[i].Job = job
		} else {
			out[i].Err = fmt.Errorf("job %d is no longer %s at version %d, or is gone: %w", u.ID, u.From, u.Version, engine.ErrConflict)
		}
	}
	for i, r := range out {
		if r.Err == nil {
			s.jobChanged(us[i].To)
		}
	}
	return out, nil
}

// checkJobUpdates refuses, in out, each update that could not apply
// whatever the database holds, and returns the others in the order of
// their ids: every batch takes its rows' locks in id order, so two batches
// over the same jobs queue behind each other rather than deadlock. Two
// updates of one job make the whole call an error: which one would win is
// undefined.
func checkJobUpdates(us []engine.JobUpdate, out []engine.JobUpdateResult) ([]engine.JobUpdate, error) {
	// A batch in id order, as the starts of a page of the queue mostly
	// come, goes as it is when no update is refused: neither sorted nor
	// copied. One with a refusal is checked again below.
	if inIDOrder(us) && !slices.ContainsFunc(us, func(u engine.JobUpdate) bool { return checkJobUpdate(u) != nil }) {
		return us, nil
	}
	// The positions are sorted, not the updates: an update is large, and
	// sorting them moved each several times. In id order two updates of a
	// job are next to each other.
	order := make([]int, len(us))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(us[a].ID, us[b].ID) })
	send := make([]engine.JobUpdate, 0, len(us))
	for k, i := range order {
		if k > 0 && us[order[k-1]].ID == us[i].ID {
			return nil, fmt.Errorf("job %d appears twice; one call updates each job at most once", us[i].ID)
		}
		if err := checkJobUpdate(us[i]); err != nil {
			out[i].Err = err
			continue
		}
		send = append(send, us[i])
	}
	return send, nil
}

// checkJobUpdate is JobUpdate's validation, and it refuses text a backend
// would reject (PostgreSQL takes no invalid UTF-8 and no NUL), which would
// otherwise fail the whole batch for one job.
func checkJobUpdate(u engine.JobUpdate) error {
	if err := u.Validate(); err != nil {
		return err
	}
	refuse := func(format string, a ...any) error {
		return &engine.TransitionError{ID: u.ID, From: u.From, To: u.To, Reason: fmt.Sprintf(format, a...)}
	}
	if sec := u.RunAfterSeconds; sec != nil && !(math.Abs(*sec) <= maxRunAfterSeconds) {
		return refuse("run after %v seconds is not a number in range", *sec)
	}
	if u.Node != nil && !storableText(*u.Node) {
		return refuse("node %q is not valid UTF-8 text", *u.Node)
	}
	if u.Message != nil && !storableText(*u.Message) {
		return refuse("message %q is not valid UTF-8 text", *u.Message)
	}
	if u.Priority != nil {
		return refuse("%s", engine.ErrBatchPriority)
	}
	return engine.CheckUsage(u)
}

// inIDOrder reports whether the ids of us strictly increase: in id order,
// and no job twice.
func inIDOrder(us []engine.JobUpdate) bool {
	for i := 1; i < len(us); i++ {
		if us[i-1].ID >= us[i].ID {
			return false
		}
	}
	return true
}

func storableText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// jobUpdateChunk applies one chunk of transitions in one statement and
// records in changed the jobs it changed.
// With readIDs it records only which jobs changed (a nil job each).
func (s *Store) jobUpdateChunk(ctx context.Context, q querier, us []engine.JobUpdate, changed map[int64]*engine.Job, read readBack) error {
	q = s.withKept(q)
	if !s.dialect.updateReturns {
		return s.jobUpdateChunkLocked(ctx, q, us, changed, read)
	}
	query, a := s.updateStatement(us, read)
	if read == readIDs {
		var ids []int64
		if err := s.selectRows(ctx, q, &ids, query, a, false); err != nil {
			return err
		}
		for _, id := range ids {
			changed[id] = nil
		}
		return nil
	}
	jobs := make([]*engine.Job, 0, len(us))
	if err := s.selectRows(ctx, q, &jobs, query, a, false); err != nil {
		return err
	}
	if query == qJobStartMany {
		if err := setStarted(jobs, us); err != nil {
			return err
		}
	}
	addJobs(changed, jobs)
	return nil
}

// updateStatement is the statement that applies the chunk us where UPDATE
// returns rows, and its parameters; it reads back what read asks for.
func (s *Store) updateStatement(us []engine.JobUpdate, read readBack) (string, args) {
	query, _ := read.statements()
	switch {
	// A node's starts, as it takes a batch of offers, and the ends of its
	// runs, as it records their results: each kind has a statement made
	// for it alone.
	case s.dialect.sendsArrays && read == readStarted && every(us, plainStart):
		return qJobStartMany, jobStartArrays(us)
	case s.dialect.sendsArrays && read == readIDs && every(us, plainEnd):
		return qJobEndMany, jobUpdateArrays(us)
	case s.dialect == postgresDialect:
		return query, jobUpdateArrays(us)
	case s.dialect == sqliteDialect:
		return query, args{"updates": jobUpdateTuplesJSON(us)}
	default:
		return query, args{"updates": jobUpdatesJSON(us)}
	}
}

// jobUpdateChunkLocked applies one chunk where UPDATE returns no rows: it
// locks the chunk's rows, updates those still at the expected status and
// version, and reads them back. Between the three statements no one else
// can change the locked rows, so the transitions it reports applied are
// exactly the ones it applied. A start under a lease term is checked after
// its update (see checkTermsAfter). q must be a transaction.
func (s *Store) jobUpdateChunkLocked(ctx context.Context, q querier, us []engine.JobUpdate, changed map[int64]*engine.Job, read readBack) error {
	var current []struct {
		ID      int64  `db:"id"`
		Version int64  `db:"version"`
		Status  string `db:"status"`
	}
	if err := s.selectRows(ctx, q, &current, qJobUpdateManyLock, args{"ids": jobIDsJSON(us)}, false); err != nil {
		return err
	}
	type state struct {
		version int64
		status  engine.Status
	}
	found := make(map[int64]state, len(current))
	for _, c := range current {
		found[c.ID] = state{c.Version, engine.Status(c.Status)}
	}
	match := make([]engine.JobUpdate, 0, len(us))
	for _, u := range us {
		if found[u.ID] == (state{u.Version, u.From}) {
			match = append(match, u)
		}
	}
	if len(match) == 0 {
		return nil
	}
	n, err := s.exec(ctx, q, qJobUpdateMany, args{"updates": jobUpdatesJSON(match)})
	if err != nil {
		return err
	}
	if n != int64(len(match)) {
		return fmt.Errorf("changed %d of %d locked jobs", n, len(match))
	}
	var jobs []*engine.Job
	if _, query := read.statements(); query != "" {
		if err := s.selectRows(ctx, q, &jobs, query, args{"ids": jobIDsJSON(match)}, false); err != nil {
			return err
		}
	}
	if err := s.checkTermsAfter(ctx, q, match); err != nil {
		return err
	}
	if read == readIDs {
		for _, u := range match {
			changed[u.ID] = nil
		}
		return nil
	}
	addJobs(changed, jobs)
	return nil
}

// lapsedTermsError undoes a transaction whose starts were made under lease
// terms that were no longer current.
type lapsedTermsError struct {
	terms map[engine.LeaseTerm]bool
}

func (e *lapsedTermsError) Error() string {
	return "the lease term the jobs were started under lapsed during their update"
}

// checkTermsAfter checks, after the update that made them and as the
// transaction's last read, that each lease term the updates start jobs
// under (a batch has one, as a rule) is still the current, unexpired lease
// of its owner; a term that is not fails the transaction with a
// *lapsedTermsError.
//
// After, not before: a process stopped between a check and its update
// would start jobs long after the check, under a term that may have
// expired meanwhile. A term current now was current at the update too,
// since a lapsed term never comes back and its expiry only grows while it
// is held. The read locks the lease row (shared) so that it sees the last
// committed lease, not the transaction's snapshot; a new term waits for the
// commit that follows, and so begins after these starts.
func (s *Store) checkTermsAfter(ctx context.Context, q querier, us []engine.JobUpdate) error {
	var lapsed map[engine.LeaseTerm]bool
	checked := map[engine.LeaseTerm]bool{}
	for _, u := range us {
		t := u.StartedUnder
		if t == nil {
			continue
		}
		key := engine.LeaseTerm{Owner: t.Owner, Term: t.Term}
		if checked[key] {
			continue
		}
		checked[key] = true
		var n int
		if err := s.get(ctx, q, &n, qLeaseTermCurrent, args{"owner": t.Owner, "term": t.Term}); err != nil {
			return err
		}
		if n == 0 {
			if lapsed == nil {
				lapsed = map[engine.LeaseTerm]bool{}
			}
			lapsed[key] = true
		}
	}
	if lapsed != nil {
		return &lapsedTermsError{terms: lapsed}
	}
	return nil
}

// refuseLapsedStarts answers, in out, each start of send made under a term
// in lapsed, and returns the other updates of send.
func refuseLapsedStarts(us, send []engine.JobUpdate, lapsed map[engine.LeaseTerm]bool, out []engine.JobUpdateResult) []engine.JobUpdate {
	refused := map[int64]bool{}
	rest := send[:0:0]
	for _, u := range send {
		if t := u.StartedUnder; t != nil && lapsed[engine.LeaseTerm{Owner: t.Owner, Term: t.Term}] {
			refused[u.ID] = true
			continue
		}
		rest = append(rest, u)
	}
	for i, u := range us {
		if refused[u.ID] {
			t := u.StartedUnder
			out[i].Err = fmt.Errorf("job %d was not started: lease term %d of %s is no longer current: %w", u.ID, t.Term, t.Owner, engine.ErrConflict)
		}
	}
	return rest
}

// setStarted sets on each job job_start_many read back what its start
// wrote and the statement leaves out: RUNNING, on the node of its update,
// at the version after the one the update was guarded by. us holds the
// updates of the jobs, in id order.
func setStarted(jobs []*engine.Job, us []engine.JobUpdate) error {
	for _, j := range jobs {
		k, found := slices.BinarySearchFunc(us, j.ID, func(u engine.JobUpdate, id int64) int { return cmp.Compare(u.ID, id) })
		if !found {
			return fmt.Errorf("job %d was started without an update", j.ID)
		}
		u := us[k]
		j.Status, j.Node, j.Version = u.To, *u.Node, u.Version+1
	}
	return nil
}

func addJobs(changed map[int64]*engine.Job, jobs []*engine.Job) {
	for _, job := range jobs {
		changed[job.ID] = job
	}
}

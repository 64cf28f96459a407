package memstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// The Store's own TxStore methods: each runs alone under the lock.

// JobInsert creates a job; see engine.TxStore.
func (s *Store) JobInsert(ctx context.Context, p engine.JobInsertParams) (*engine.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobInsert(ctx, p)
}

// JobSubmit creates one job, with the service defaults the registered
// nodes give its type where p asks for them, and records its event; see
// engine.Store.
func (s *Store) JobSubmit(ctx context.Context, p engine.JobSubmitParams) (engine.JobSubmitted, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.KeyPosition != nil || p.RollbackOf != nil {
		return engine.JobSubmitted{}, engine.ErrInsertManyPlace
	}
	ev := p.Event
	ev.JobIDs, ev.Type = nil, ""
	if err := engine.ValidateEventAppend(ev); err != nil {
		return engine.JobSubmitted{}, err
	}
	now := s.now()
	ip, out := engine.SubmitDefaults(s.liveNodes(now), p)
	if p.RunIn != nil {
		at := now.Add(*p.RunIn)
		ip.RunAfter = &at
	}
	// The job and its event together, or neither: a transaction, as Tx
	// runs one, under the lock already held.
	tx := &txStore{s: s, logging: true}
	job, err := tx.JobInsert(ctx, ip)
	if err == nil {
		ev.JobIDs = []int64{job.ID}
		err = tx.EventAppend(ctx, ev)
	}
	tx.done = true
	if err != nil {
		tx.rollback()
		return engine.JobSubmitted{}, err
	}
	tx.signalCommitted()
	out.ID = job.ID
	return out, nil
}

// JobGet returns a job or a *NotFoundError.
func (s *Store) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobGet(ctx, id)
}

// JobList returns matching jobs ordered by id; see engine.TxStore.
func (s *Store) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobList(ctx, p)
}

// JobTimes returns the status and times of every job matching p's filters,
// in no order, as the SQL store's JobTimes does: p's Limit, Sort and Brief
// play no part.
func (s *Store) JobTimes(_ context.Context, p engine.JobListParams) ([]engine.JobTimes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.Limit, p.Sort = 0, engine.JobSort{}
	found := s.jobs.list(p)
	out := make([]engine.JobTimes, len(found))
	for i, j := range found {
		out[i] = engine.JobTimes{Status: j.Status, CreatedAt: j.CreatedAt,
			StartedAt: clonePtr(j.StartedAt), FinishedAt: clonePtr(j.FinishedAt)}
	}
	return out, nil
}

// JobUpdate applies one guarded transition; see engine.TxStore.
func (s *Store) JobUpdate(ctx context.Context, u engine.JobUpdate) (*engine.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.JobUpdate(ctx, u)
}

func jobNotFound(id int64) error {
	return &engine.NotFoundError{What: "job", ID: strconv.FormatInt(id, 10)}
}

// JobInsert validates and stores a new job with the SQL store's defaults:
// MaxAttempts 0 means 1, Timeout 0 means engine.DefaultJobTimeout, an empty
// payload is {}, and a QUEUED job is queued now.
func (tx *txStore) JobInsert(_ context.Context, p engine.JobInsertParams) (*engine.Job, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	if err := engine.ValidateJobInsert(p); err != nil {
		return nil, err
	}
	s := tx.s
	if p.ParentID != nil && s.jobs.byID[*p.ParentID] == nil {
		return nil, fmt.Errorf("insert job: parent %w", jobNotFound(*p.ParentID))
	}
	payload := strings.TrimSpace(string(p.Payload))
	if payload == "" {
		payload = "{}"
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = engine.DefaultJobTimeout
	}
	now := s.now()
	s.nextJobID++
	j := &engine.Job{
		ID:           s.nextJobID,
		Type:         p.Type,
		Operation:    p.Operation,
		Args:         slices.Clone(p.Args),
		Payload:      []byte(payload),
		Load:         p.Load,
		Priority:     engine.PriorityOr(p.Priority),
		Status:       p.Status,
		Key:          p.Key,
		ParentID:     clonePtr(p.ParentID),
		MaxAttempts:  max(p.MaxAttempts, 1),
		Backoff:      engine.Duration(p.Backoff),
		Rollback:     p.Rollback,
		RollbackType: p.RollbackType,
		KeyPosition:  clonePtr(p.KeyPosition),
		RollbackOf:   clonePtr(p.RollbackOf),
		MemoryLimit:  p.MemoryLimit,
		Timeout:      engine.Duration(timeout),
		Version:      1,
		Creator:      p.Creator,
		CreatedAt:    now,
	}
	if j.Args == nil {
		j.Args = []string{}
	}
	if p.RunAfter != nil {
		j.RunAfter = engine.Ptr(p.RunAfter.UTC())
	}
	if p.Status == engine.StatusQueued {
		j.QueuedAt = engine.Ptr(now)
	}
	s.jobs.put(j)
	if tx.logging {
		tx.onUndo(func() { s.jobs.remove(j.ID) })
	}
	tx.jobChanged(j.Status)
	return tx.s.jobOut(j), nil
}

// JobGet returns a job or a *NotFoundError.
func (tx *txStore) JobGet(_ context.Context, id int64) (*engine.Job, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	j := tx.s.jobs.byID[id]
	if j == nil {
		return nil, jobNotFound(id)
	}
	return tx.s.jobOut(j), nil
}

// JobList reads the narrowest index the filters allow (parent, node, key,
// then the smaller of the status and the type sets), newest first so a
// Limit stops early, and returns the jobs oldest first; with p.Sort.Field,
// every match in the sort's order.
func (tx *txStore) JobList(_ context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	if p.Sort.Field != "" {
		if _, err := engine.JobSortFieldNamed(p.Sort.Field); err != nil {
			return nil, err
		}
	}
	found := tx.s.jobs.list(p)
	if p.Brief {
		out := make([]*engine.Job, len(found))
		for i, j := range found {
			out[i] = j.Brief()
		}
		return out, nil
	}
	return tx.s.jobsOut(found), nil
}

// list returns the stored jobs (not copies) that match p, as JobList does.
func (t *jobTable) list(p engine.JobListParams) []*engine.Job {
	var sources []*idSet
	switch {
	case p.ParentID != nil:
		sources = append(sources, t.byParent[*p.ParentID])
	case len(p.ParentIDs) > 0:
		sources = union(t.byParent, p.ParentIDs)
	case p.Node != "":
		sources = append(sources, t.byNode[p.Node])
	case p.Key != "":
		sources = append(sources, t.byKey[p.Key])
	case len(p.Statuses) > 0 || len(p.Types) > 0:
		byStatus, byType := union(t.byStatus, p.Statuses), union(t.byType, p.Types)
		switch {
		case len(p.Types) == 0:
			sources = byStatus
		case len(p.Statuses) == 0 || size(byType) < size(byStatus):
			sources = byType
		default:
			sources = byStatus
		}
	default:
		sources = append(sources, t.all)
	}
	match := func(j *engine.Job) bool {
		return (len(p.Statuses) == 0 || slices.Contains(p.Statuses, j.Status)) &&
			(len(p.Types) == 0 || slices.Contains(p.Types, j.Type)) &&
			(p.Node == "" || j.Node == p.Node) &&
			(p.Key == "" || j.Key == p.Key) &&
			(p.ParentID == nil || (j.ParentID != nil && *j.ParentID == *p.ParentID)) &&
			(len(p.ParentIDs) == 0 || (j.ParentID != nil && slices.Contains(p.ParentIDs, *j.ParentID))) &&
			(!p.Roots || j.ParentID == nil) &&
			(p.Creator == "" || j.Creator == p.Creator) &&
			(p.PriorityMin == 0 || j.Priority >= p.PriorityMin) &&
			(p.PriorityMax == 0 || j.Priority <= p.PriorityMax) &&
			(p.CreatedAfter == nil || !j.CreatedAt.Before(*p.CreatedAfter)) &&
			(p.CreatedBefore == nil || !j.CreatedAt.After(*p.CreatedBefore)) &&
			inIDRange(j.ID, p.MinID, p.MaxID) &&
			(!p.DoubleFault || t.doubleFault(j)) &&
			(!p.OOMKilled || (j.Usage != nil && j.Usage.OOMKilled))
	}
	// Sorted by another field, every match counts before the limit;
	// by id, each source can stop at the newest Limit of its own.
	sorted := p.Sort.Field != ""
	var found []*engine.Job
	for _, src := range sources {
		if src == nil {
			continue
		}
		n := 0
		visit := func(id int64) bool {
			if id < p.MinID {
				return false
			}
			j := t.byID[id]
			if match(j) {
				found = append(found, j)
				n++
			}
			return sorted || p.Limit <= 0 || n < p.Limit
		}
		if p.MaxID > 0 {
			src.DescendLessOrEqual(p.MaxID, visit)
		} else {
			src.Descend(visit)
		}
	}
	if sorted {
		slices.SortFunc(found, p.Sort.Compare)
		if p.Limit > 0 && len(found) > p.Limit {
			found = found[:p.Limit]
		}
		return found
	}
	slices.SortFunc(found, func(a, b *engine.Job) int { return compareID(a.ID, b.ID) })
	if p.Limit > 0 && len(found) > p.Limit {
		found = found[len(found)-p.Limit:]
	}
	return found
}

// doubleFault reports whether j's rollback job ended FAILED.
func (t *jobTable) doubleFault(j *engine.Job) bool {
	if j.RollbackJobID == nil {
		return false
	}
	r := t.byID[*j.RollbackJobID]
	return r != nil && r.Status == engine.StatusFailed
}

// union returns the sets of the given values, each once: the sets of
// different values are disjoint, so together they hold every match once.
func union[K comparable](index map[K]*idSet, values []K) []*idSet {
	var out []*idSet
	seen := map[K]bool{}
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, index[v])
		}
	}
	return out
}

func size(sets []*idSet) int {
	n := 0
	for _, set := range sets {
		if set != nil {
			n += set.Len()
		}
	}
	return n
}

// inIDRange reports whether id is within [minID, maxID], where 0 leaves
// that end open (engine.JobListParams).
func inIDRange(id, minID, maxID int64) bool {
	return id >= minID && (maxID == 0 || id <= maxID)
}

func compareID(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// JobUpdate applies one guarded transition as job_update.sql does: every
// time it sets is the store's now, read once.
func (tx *txStore) JobUpdate(_ context.Context, u engine.JobUpdate) (*engine.Job, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	if err := u.Validate(); err != nil {
		return nil, err
	}
	if err := engine.CheckUsage(u); err != nil {
		return nil, err
	}
	var runAfter time.Duration
	if u.RunAfterSeconds != nil {
		sec := *u.RunAfterSeconds
		// A duration holds about ±292 years; past that the SQL stores'
		// timestamps overflow too.
		if math.IsNaN(sec) || math.IsInf(sec, 0) || math.Abs(sec) > 1e10 {
			return nil, fmt.Errorf("update job %d: run after %v seconds is not a number", u.ID, sec)
		}
		runAfter = time.Duration(math.Round(sec * float64(time.Second)))
	}
	s := tx.s
	old := s.jobs.byID[u.ID]
	if old == nil {
		return nil, jobNotFound(u.ID)
	}
	if old.Status != u.From || old.Version != u.Version {
		return nil, fmt.Errorf("job %d is no longer %s at version %d: %w", u.ID, u.From, u.Version, engine.ErrConflict)
	}
	now := s.now()
	if t := u.StartedUnder; t != nil && !s.termCurrent(*t, now) {
		return nil, fmt.Errorf("job %d: lease term %d of %s is not current: %w", u.ID, t.Term, t.Owner, engine.ErrConflict)
	}
	box := &jobVersion{job: *old}
	j := &box.job
	j.Status = u.To
	j.Version++
	if u.Node != nil {
		j.Node = *u.Node
	}
	if u.RebaseAttempts {
		j.AttemptBase = old.Attempt
	}
	if u.IncrementAttempt {
		j.Attempt++
	}
	switch {
	case u.ExitCode != nil:
		box.exitCode = *u.ExitCode
		j.ExitCode = &box.exitCode
	case u.ClearResult || u.IncrementAttempt:
		j.ExitCode = nil
	}
	switch {
	case u.Usage != nil:
		j.Usage = engine.Ptr(*u.Usage)
	case u.ClearResult || u.IncrementAttempt:
		j.Usage = nil
	}
	if u.Message != nil {
		j.Message = *u.Message
	}
	switch {
	case u.RunAfterSeconds != nil:
		j.RunAfter = engine.Ptr(now.Add(runAfter))
	case u.ClearResult:
		j.RunAfter = nil
	}
	if u.ClearResult {
		// A requeued job that fails finally again rolls back again.
		j.Progress, j.ProgressMessage, j.RollbackJobID = 0, "", nil
	}
	switch {
	case u.MarkFinished:
		box.finished = now
		j.FinishedAt = &box.finished
	case u.ClearResult:
		j.FinishedAt = nil
	}
	if u.MarkQueued {
		j.QueuedAt = engine.Ptr(now)
	}
	if u.MarkStarted {
		box.started = now
		j.StartedAt = &box.started
	}
	if t := u.StartedUnder; t != nil {
		j.Dispatcher, j.LeaseTerm = t.Owner, t.Term
	}
	if u.Priority != nil {
		j.Priority = *u.Priority
	}
	s.jobs.put(j)
	if tx.logging {
		tx.onUndo(func() { s.jobs.put(old) })
	}
	tx.recordAttempt(old, j)
	tx.jobChanged(j.Status)
	return tx.s.jobOut(j), nil
}

// jobVersion is a job as a transition stores it, together with the values
// the transition's new time and exit code fields point to, so a transition
// costs one allocation, not one per field it sets. A later version that
// keeps such a field points into this one and keeps it in memory: one
// earlier version at most per field, as every transition that sets the
// field again sets it anew.
type jobVersion struct {
	job               engine.Job
	started, finished time.Time
	exitCode          int
}

// JobProgressSet records progress (clamped to 0–100) of the attempt running
// on p.Node; ErrConflict once the job has moved on, as job_progress_set.sql
// fences it. Progress is no transition: the version stays.
func (s *Store) JobProgressSet(_ context.Context, p engine.JobProgressParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.jobs.byID[p.ID]
	if old == nil {
		return jobNotFound(p.ID)
	}
	if old.Attempt != p.Attempt || old.Node != p.Node || !old.Status.NodeOwned() {
		return fmt.Errorf("job %d attempt %d is no longer running on %q: %w", p.ID, p.Attempt, p.Node, engine.ErrConflict)
	}
	j := *old
	j.Progress = min(max(p.Progress, 0), 100)
	j.ProgressMessage = p.Message
	s.jobs.put(&j)
	return nil
}

// JobListDispatchable returns one page of one queue, judged by
// engine.DispatchHold at the store's now; see engine.Store. It reads only
// the queue's jobs that can be dispatchable (jobs without a key and the
// heads of keys) from p.After on, and passes over the ones outside the
// load range by their entry alone, so a page costs the jobs it skips for
// their run_after and the active jobs of the keys it meets, however many
// jobs wait behind those heads. A page of the jobs that fit a room reads
// the jobs of each load that fits (queue.ascendInLoads), so the heavier
// jobs ahead of them cost it nothing. It returns the stored jobs, not
// copies.
func (s *Store) JobListDispatchable(_ context.Context, p engine.JobDispatchableParams) ([]*engine.Job, error) {
	if err := engine.CheckDispatchable(p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	out := []*engine.Job{}
	q := s.jobs.queues[queueKey{status: p.Status, typ: p.Type}]
	if q == nil {
		return out, nil
	}
	set := q.byPlace
	if p.FirstChildren {
		set = q.children
	}
	visit := func(e queueEntry) bool {
		if (p.MaxLoad != nil && e.load > *p.MaxLoad) || (p.LoadAbove != nil && e.load <= *p.LoadAbove) {
			return true
		}
		j := s.jobs.byID[e.place.ID]
		if p.FirstChildren && s.jobs.childrenHolding[*j.ParentID] > 0 {
			return true
		}
		if engine.DispatchHold(j, now, s.jobs.keyRivals(j)).Dispatchable() {
			out = append(out, j)
		}
		return p.Limit <= 0 || len(out) < p.Limit
	}
	from := firstPlace
	if p.After != (engine.QueuePlace{}) {
		from = engine.QueuePlace{Priority: p.After.Priority, ID: p.After.ID + 1}
	}
	if !p.FirstChildren && p.MaxLoad != nil && q.ascendInLoads(from, p.LoadAbove, *p.MaxLoad, visit) {
		return out, nil
	}
	set.AscendGreaterOrEqual(queueEntry{place: from}, visit)
	return out, nil
}

// JobQueueLoads describes every non-empty queue; see engine.Store. Each
// figure is the first or last entry of an index.
func (s *Store) JobQueueLoads(_ context.Context) ([]engine.QueueLoads, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engine.QueueLoads, 0, len(s.jobs.queues))
	for k, q := range s.jobs.queues {
		lightest, _ := q.byLoad.Min()
		heaviest, _ := q.byLoad.Max()
		out = append(out, engine.QueueLoads{Status: k.status, Type: k.typ, Lightest: lightest.load,
			Heaviest: heaviest.load, Children: q.children.Len() > 0})
	}
	slices.SortFunc(out, engine.CompareQueues)
	return out, nil
}

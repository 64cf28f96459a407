package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// pruneStore is a store whose database clock the test sets (the cutoff of
// a prune is read from it) and that records the purges asked of it.
type pruneStore struct {
	store  engine.PruneStore
	mu     sync.Mutex
	now    time.Time
	purges []engine.JobPurgeParams
}

func (s *pruneStore) Now(context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now, nil
}

func (s *pruneStore) JobPurge(ctx context.Context, p engine.JobPurgeParams) (engine.JobPurgeResult, error) {
	s.mu.Lock()
	s.purges = append(s.purges, p)
	s.mu.Unlock()
	return s.store.JobPurge(ctx, p)
}

func (s *pruneStore) EventPurge(ctx context.Context, p engine.EventPurgeParams) (int, error) {
	return s.store.EventPurge(ctx, p)
}

// storeKinds runs f on the in-memory store and on SQLite. past moves the
// store's own clock beyond t: the memory store's by hand, SQLite's by
// waiting for it.
func storeKinds(t *testing.T, f func(t *testing.T, s engine.Store, past func(time.Time))) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		clock := engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		f(t, memstore.New(clock), func(at time.Time) { clock.Set(at.Add(time.Minute)) })
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := dbstore.Open(t.Context(), sqlitetest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		f(t, s, func(at time.Time) {
			var now time.Time
			if !waitfor.Within(30*time.Second, func() bool {
				var err error
				if now, err = s.Now(context.Background()); err != nil {
					t.Fatal(err)
				}
				return now.After(at.Add(5 * time.Millisecond))
			}) {
				t.Fatalf("database clock %s never passed %s", now, at)
			}
		})
	})
}

func pruneJob(t *testing.T, s engine.Store, p engine.JobInsertParams) *engine.Job {
	t.Helper()
	if p.Type == "" {
		p.Type = engine.TypeNoop
	}
	if p.Status == "" {
		p.Status = engine.StatusQueued
	}
	j, err := s.JobInsert(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func pruneApply(t *testing.T, s engine.Store, u engine.JobUpdate) *engine.Job {
	t.Helper()
	j, err := s.JobUpdate(t.Context(), u)
	if err != nil {
		t.Fatalf("JobUpdate(%+v): %v", u, err)
	}
	return j
}

func pruneStart(t *testing.T, s engine.Store, j *engine.Job) *engine.Job {
	t.Helper()
	return pruneApply(t, s, engine.QueuedStartUpdate(j, "n1"))
}

func pruneEnd(t *testing.T, s engine.Store, j *engine.Job, outcome engine.RunOutcome) *engine.Job {
	t.Helper()
	res := engine.RunResult{Outcome: outcome, Reason: string(outcome)}
	if outcome == engine.RunFailed {
		res.ExitCode = 1
	}
	return pruneApply(t, s, engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
}

func pruneRun(t *testing.T, s engine.Store, outcome engine.RunOutcome, parent *engine.Job) *engine.Job {
	t.Helper()
	p := engine.JobInsertParams{}
	if parent != nil {
		p.ParentID = &parent.ID
	}
	return pruneEnd(t, s, pruneStart(t, s, pruneJob(t, s, p)), outcome)
}

// gone reports whether the job no longer exists.
func gone(t *testing.T, s engine.Store, j *engine.Job) bool {
	t.Helper()
	_, err := s.JobGet(t.Context(), j.ID)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		t.Fatal(err)
	}
	return errors.Is(err, engine.ErrNotFound)
}

func wantPruned(t *testing.T, s engine.Store, what string, removed, kept []*engine.Job) {
	t.Helper()
	for _, j := range removed {
		if !gone(t, s, j) {
			t.Errorf("%s: job %d (%s) should be gone", what, j.ID, j.Status)
		}
	}
	for _, j := range kept {
		if gone(t, s, j) {
			t.Errorf("%s: job %d (%s) should stay", what, j.ID, j.Status)
		}
	}
}

// clockAfter wraps s with a database clock an hour after the latest of
// the given finish times.
func clockAfter(s engine.Store, jobs ...*engine.Job) *pruneStore {
	var latest time.Time
	for _, j := range jobs {
		if j.FinishedAt != nil && j.FinishedAt.After(latest) {
			latest = *j.FinishedAt
		}
	}
	return &pruneStore{store: s, now: latest.Add(time.Hour)}
}

// olderThan is the age that puts the cutoff halfway between the end of
// old and the end of young, on ps's clock.
func olderThan(ps *pruneStore, old, young *engine.Job) time.Duration {
	mid := old.FinishedAt.Add(young.FinishedAt.Sub(*old.FinishedAt) / 2)
	return ps.now.Sub(mid)
}

func TestPruneOnlyOldEndedJobs(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, past func(time.Time)) {
		ctx := t.Context()
		running := pruneStart(t, s, pruneJob(t, s, engine.JobInsertParams{}))
		queued := pruneJob(t, s, engine.JobInsertParams{})
		held := pruneJob(t, s, engine.JobInsertParams{Status: engine.StatusInstantiated})
		done := pruneRun(t, s, engine.RunSucceeded, nil)
		failed := pruneRun(t, s, engine.RunFailed, nil)
		u, err := engine.VerbCancel.Update(pruneJob(t, s, engine.JobInsertParams{}))
		if err != nil {
			t.Fatal(err)
		}
		cancelled := pruneApply(t, s, u)
		for _, j := range []*engine.Job{running, done} {
			if err := s.JobLogAppend(ctx, engine.JobLogAppendParams{JobID: j.ID, Attempt: 1, Data: []byte("output\n")}); err != nil {
				t.Fatal(err)
			}
		}
		past(*cancelled.FinishedAt)
		young := pruneRun(t, s, engine.RunSucceeded, nil)
		ps := clockAfter(s, young)
		age := olderThan(ps, cancelled, young)

		dry, err := engine.Prune(ctx, ps, engine.PruneParams{OlderThan: age, DryRun: true})
		if err != nil || dry.Removed != 3 {
			t.Fatalf("dry run: %+v, %v; want 3 counted", dry, err)
		}
		wantPruned(t, s, "after the dry run", nil, []*engine.Job{running, queued, held, done, failed, cancelled, young})

		res, err := engine.Prune(ctx, ps, engine.PruneParams{OlderThan: age})
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 3 || res.Stopped || !res.Cutoff.Equal(ps.now.Add(-age)) {
			t.Errorf("prune: %+v; want 3 removed before %s", res, ps.now.Add(-age))
		}
		wantPruned(t, s, "prune", []*engine.Job{done, failed, cancelled}, []*engine.Job{running, queued, held, young})
		if logs, err := s.JobLogList(ctx, engine.JobLogListParams{JobID: done.ID}); err != nil || len(logs) != 0 {
			t.Errorf("log of a pruned job: %v, %v; want none", logs, err)
		}
		if logs, err := s.JobLogList(ctx, engine.JobLogListParams{JobID: running.ID}); err != nil || len(logs) != 1 {
			t.Errorf("log of the running job: %v, %v; want its one chunk", logs, err)
		}
	})
}

func TestPruneInBatches(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, past func(time.Time)) {
		var old []*engine.Job
		for range 7 {
			old = append(old, pruneRun(t, s, engine.RunSucceeded, nil))
		}
		past(*old[len(old)-1].FinishedAt)
		young := pruneRun(t, s, engine.RunFailed, nil)
		ps := clockAfter(s, young)
		age := olderThan(ps, old[len(old)-1], young)

		pauses := 0
		between := func(context.Context) bool { pauses++; return true }
		res, err := engine.Prune(t.Context(), ps, engine.PruneParams{OlderThan: age, Batch: 3, Between: between})
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 7 {
			t.Errorf("removed %d, want 7", res.Removed)
		}
		// 3, 3, 1, and an empty one that says there is no more; then one
		// batch of the events naming no job, after a pause of its own.
		if len(ps.purges) != 4 || pauses != 4 {
			t.Errorf("%d purges with %d pauses, want 4 and 4", len(ps.purges), pauses)
		}
		for _, p := range ps.purges {
			if p.Limit != 3 || p.FinishedBefore == nil || !p.FinishedBefore.Equal(res.Cutoff) {
				t.Errorf("purge %+v, want a limit of 3 and jobs ended before %s", p, res.Cutoff)
			}
		}
		wantPruned(t, s, "in batches", old, []*engine.Job{young})
	})
}

func TestPruneStopsWhenBetweenSaysSo(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, past func(time.Time)) {
		var old []*engine.Job
		for range 5 {
			old = append(old, pruneRun(t, s, engine.RunSucceeded, nil))
		}
		ps := clockAfter(s, old...)
		res, err := engine.Prune(t.Context(), ps, engine.PruneParams{
			OlderThan: time.Minute, Batch: 2, Between: func(context.Context) bool { return false },
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 2 || !res.Stopped {
			t.Errorf("prune stopped after the first batch: %+v; want 2 removed and stopped", res)
		}
		wantPruned(t, s, "stopped", old[:2], old[2:])
	})
}

// A parent goes only with or after its children: one with a child still
// queued stays, and a family larger than a batch goes children first.
func TestPruneParentsAfterChildren(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, past func(time.Time)) {
		waiting := pruneStart(t, s, pruneJob(t, s, engine.JobInsertParams{}))
		queuedChild := pruneJob(t, s, engine.JobInsertParams{ParentID: &waiting.ID})
		waiting = pruneEnd(t, s, waiting, engine.RunSucceeded)

		root := pruneStart(t, s, pruneJob(t, s, engine.JobInsertParams{}))
		child := pruneStart(t, s, pruneJob(t, s, engine.JobInsertParams{ParentID: &root.ID}))
		grandchild := pruneRun(t, s, engine.RunSucceeded, child)
		child = pruneEnd(t, s, child, engine.RunFailed)
		root = pruneEnd(t, s, root, engine.RunSucceeded)

		ps := clockAfter(s, waiting, root, child, grandchild)
		res, err := engine.Prune(t.Context(), ps, engine.PruneParams{OlderThan: time.Minute, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Removed != 3 {
			t.Errorf("removed %d, want the family of 3", res.Removed)
		}
		wantPruned(t, s, "families", []*engine.Job{root, child, grandchild}, []*engine.Job{waiting, queuedChild})
	})
}

func TestPruneStates(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, past func(time.Time)) {
		done := pruneRun(t, s, engine.RunSucceeded, nil)
		failed := pruneRun(t, s, engine.RunFailed, nil)
		ps := clockAfter(s, done, failed)
		res, err := engine.Prune(t.Context(), ps, engine.PruneParams{OlderThan: time.Minute, Statuses: []engine.Status{engine.StatusFailed}})
		if err != nil || res.Removed != 1 {
			t.Fatalf("prune of FAILED: %+v, %v; want 1 removed", res, err)
		}
		wantPruned(t, s, "FAILED only", []*engine.Job{failed}, []*engine.Job{done})
	})
}

func TestPruneInvalid(t *testing.T) {
	t.Parallel()
	s := memstore.New(engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
	done := pruneRun(t, s, engine.RunSucceeded, nil)
	ps := clockAfter(s, done)
	for what, p := range map[string]engine.PruneParams{
		"no age":           {},
		"a negative age":   {OlderThan: -time.Hour},
		"a running state":  {OlderThan: time.Minute, Statuses: []engine.Status{engine.StatusRunning}},
		"a negative batch": {OlderThan: time.Minute, Batch: -1},
	} {
		if _, err := engine.Prune(t.Context(), ps, p); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: %v, want an invalid error", what, err)
		}
	}
	if len(ps.purges) != 0 || gone(t, s, done) {
		t.Errorf("refused prunes purged: %+v", ps.purges)
	}
}

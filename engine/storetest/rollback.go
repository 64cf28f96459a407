package storetest

import (
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var rollbackTests = []subtest{
	{"KeyPositionOrdersKey", testKeyPositionOrdersKey},
	{"KeyPositionRefusedInBulk", testKeyPositionRefusedInBulk},
	{"RollbackPendingBlocksKey", testRollbackPendingBlocksKey},
	{"RollbackOnlyAfterFinalFailure", testRollbackOnlyAfterFinalFailure},
	{"RollbackSpawnedOnce", testRollbackSpawnedOnce},
	{"RollbackSpawnedOnceConcurrently", testRollbackSpawnedOnceConcurrently},
	{"RollbackSetGuarded", testRollbackSetGuarded},
	{"RollbackRequeueRollsBackAgain", testRollbackRequeueRollsBackAgain},
	{"DoubleFaultFilter", testDoubleFaultFilter},
}

// failFinally runs a job to its final failure: FAILED with no attempts left.
func failFinally(t *testing.T, s engine.Store, j *engine.Job) *engine.Job {
	t.Helper()
	for {
		j = finish(t, s, start(t, s, j, "n1"), engine.RunFailed)
		if j.Status == engine.StatusFailed {
			return j
		}
		if j.Status != engine.StatusRestart {
			t.Fatalf("job %d failed to %s, want RESTART or FAILED", j.ID, j.Status)
		}
		// The retry's backoff is not waited for: a dispatch may claim the
		// job at any time, the queue only lists it once it has passed.
	}
}

func spawn(t *testing.T, s engine.Store) []*engine.Job {
	t.Helper()
	made, err := engine.SpawnRollbacks(t.Context(), s)
	if err != nil {
		t.Fatalf("SpawnRollbacks: %v", err)
	}
	return made
}

// A job placed at an earlier job's position runs right after it, before the
// jobs submitted between them, and the store keeps the position.
func testKeyPositionOrdersKey(t *testing.T, s engine.Store) {
	a := insert(t, s, engine.JobInsertParams{Key: "k"})
	b := insert(t, s, engine.JobInsertParams{Key: "k"})
	c := insert(t, s, engine.JobInsertParams{Key: "k"})
	after := insert(t, s, engine.JobInsertParams{Key: "k", KeyPosition: engine.Ptr(a.ID), RollbackOf: engine.Ptr(a.ID)})
	// Placed before every job of its key, a job goes first.
	first := insert(t, s, engine.JobInsertParams{Key: "j"})
	front := insert(t, s, engine.JobInsertParams{Key: "j", KeyPosition: engine.Ptr(first.ID - 1)})
	if got := get(t, s, after.ID); got.KeyPosition == nil || *got.KeyPosition != a.ID || got.RollbackOf == nil || *got.RollbackOf != a.ID {
		t.Fatalf("stored key position %v, rollback of %v; want %d, %d", got.KeyPosition, got.RollbackOf, a.ID, a.ID)
	}
	if got := get(t, s, b.ID); got.KeyPosition != nil || got.RollbackOf != nil {
		t.Errorf("a job inserted without a position has %v, rollback of %v; want none", got.KeyPosition, got.RollbackOf)
	}
	queue := func() []*engine.Job { return dispatchableBoth(t, s, engine.StatusQueued, nil, 0) }
	wantIDs(t, "heads", queue(), a, front)
	finish(t, s, start(t, s, a, "n1"), engine.RunSucceeded)
	wantIDs(t, "after the first", queue(), after, front)
	after = start(t, s, after, "n1")
	wantIDs(t, "the placed job running", queue(), front)
	finish(t, s, after, engine.RunFailed)
	wantIDs(t, "the placed job ended", queue(), b, front)
	finish(t, s, start(t, s, b, "n1"), engine.RunSucceeded)
	wantIDs(t, "then submission order", queue(), c, front)
}

func testKeyPositionRefusedInBulk(t *testing.T, s engine.Store) {
	_, err := s.JobInsertMany(t.Context(), []engine.JobInsertParams{
		{Type: engine.TypeNoop, Status: engine.StatusQueued, Key: "k"},
		{Type: engine.TypeNoop, Status: engine.StatusQueued, Key: "k", KeyPosition: engine.Ptr(int64(1))},
	})
	wantErrIs(t, "JobInsertMany with a key position", err, engine.ErrInsertManyPlace)
	// The rollback fields a submit sets go through in bulk.
	ids, err := s.JobInsertMany(t.Context(), []engine.JobInsertParams{
		{Type: engine.TypeNoop, Status: engine.StatusQueued, Key: "k", Rollback: "undo 'it all'", RollbackType: "cleanup"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if j := get(t, s, ids[0]); j.Rollback != "undo 'it all'" || j.RollbackType != "cleanup" || j.KeyPosition != nil {
		t.Errorf("bulk job rollback %q type %q position %v", j.Rollback, j.RollbackType, j.KeyPosition)
	}
}

// Until its rollback job exists, a job that failed finally blocks the later
// jobs of its key; then its rollback runs before them.
func testRollbackPendingBlocksKey(t *testing.T, s engine.Store) {
	f := insert(t, s, engine.JobInsertParams{Key: "k", Type: engine.TypeExec, Load: 2.5, Rollback: `undo --to "last good"`,
		Creator: "alice"})
	g := insert(t, s, engine.JobInsertParams{Key: "k"})
	free := insert(t, s, engine.JobInsertParams{Rollback: "undo"})
	other := insert(t, s, engine.JobInsertParams{Key: "other"})
	f = failFinally(t, s, f)
	queue := func() []*engine.Job { return dispatchableBoth(t, s, engine.StatusQueued, nil, 0) }
	wantIDs(t, "behind a failed job awaiting its rollback", queue(), free, other)
	pending, err := s.JobListRollbackPending(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "awaiting their rollback", pending, f)

	hold := engine.DispatchHold(g, dbNow(t, s), []*engine.Job{f, g})
	if !hold.RollbackPending || hold.BlockedBy != f.ID {
		t.Errorf("hold %+v, want one waiting for the rollback of job %d", hold, f.ID)
	}

	made := spawn(t, s)
	if len(made) != 1 {
		t.Fatalf("SpawnRollbacks made %d jobs, want 1", len(made))
	}
	r := get(t, s, made[0].ID)
	if r.Type != engine.TypeExec || !slices.Equal(r.Args, []string{"undo", "--to", "last good"}) || r.Key != "k" ||
		r.Load != 2.5 || r.MaxAttempts != 1 || r.RollbackOf == nil || *r.RollbackOf != f.ID ||
		r.KeyPosition == nil || *r.KeyPosition != f.ID || r.Operation != "rollback of "+itoa(f.ID) ||
		r.Status != engine.StatusQueued || r.Creator != "alice" || r.Rollback != "" {
		t.Errorf("rollback job %+v", r)
	}
	f = get(t, s, f.ID)
	if f.Status != engine.StatusFailed || f.RollbackJobID == nil || *f.RollbackJobID != r.ID {
		t.Errorf("failed job %s with rollback job %v, want FAILED with %d", f.Status, f.RollbackJobID, r.ID)
	}
	wantIDs(t, "the rollback first", queue(), free, other, r)
	r = start(t, s, r, "n2")
	wantIDs(t, "the rollback running", queue(), free, other)
	finish(t, s, r, engine.RunSucceeded)
	wantIDs(t, "the rollback done", queue(), g, free, other)
	if again := spawn(t, s); len(again) != 0 {
		t.Errorf("a second SpawnRollbacks made %d jobs", len(again))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A failure with attempts left retries first; a cancelled job and a job
// that succeeded never roll back.
func testRollbackOnlyAfterFinalFailure(t *testing.T, s engine.Store) {
	retry := insert(t, s, engine.JobInsertParams{Key: "k", Rollback: "undo", MaxAttempts: 2})
	later := insert(t, s, engine.JobInsertParams{Key: "k"})
	retry = finish(t, s, start(t, s, retry, "n1"), engine.RunFailed)
	if retry.Status != engine.StatusRestart {
		t.Fatalf("first failure of two attempts: %s, want RESTART", retry.Status)
	}
	cancelled := admin(t, s, insert(t, s, engine.JobInsertParams{Rollback: "undo"}), engine.VerbCancel)
	finish(t, s, start(t, s, insert(t, s, engine.JobInsertParams{Rollback: "undo"}), "n1"), engine.RunSucceeded)
	finish(t, s, admin(t, s, start(t, s, insert(t, s, engine.JobInsertParams{Rollback: "undo"}), "n1"), engine.VerbCancel),
		engine.RunCancelled)
	if made := spawn(t, s); len(made) != 0 {
		t.Errorf("rollback jobs for a retrying, cancelled or finished job: %v", ids(made))
	}
	if cancelled.Status != engine.StatusCancelled {
		t.Fatalf("cancelled job is %s", cancelled.Status)
	}
	wantIDs(t, "later job while its key's head retries", dispatchable(t, s, engine.StatusQueued, nil, 0))
	_ = later
}

func testRollbackSpawnedOnce(t *testing.T, s engine.Store) {
	var failed []*engine.Job
	for i := range 3 {
		p := engine.JobInsertParams{Rollback: "undo", RollbackType: "cleanup"}
		if i > 0 {
			p.Key = "k"
		}
		failed = append(failed, failFinally(t, s, insert(t, s, p)))
	}
	made := spawn(t, s)
	if len(made) != len(failed) {
		t.Fatalf("made %d rollback jobs for %d failed jobs", len(made), len(failed))
	}
	for i, r := range made {
		if r.Type != "cleanup" || *r.RollbackOf != failed[i].ID {
			t.Errorf("rollback job %d: type %q of %d, want cleanup of %d", r.ID, r.Type, *r.RollbackOf, failed[i].ID)
		}
	}
	if again := spawn(t, s); len(again) != 0 {
		t.Errorf("a second SpawnRollbacks made %v", ids(again))
	}
	pending, err := s.JobListRollbackPending(t.Context(), 0)
	if err != nil || len(pending) != 0 {
		t.Errorf("still awaiting their rollback: %v, %v", ids(pending), err)
	}
}

// Two lease holders creating rollbacks at once make one job per failure:
// the guard on the failed job rolls the loser's insert back.
func testRollbackSpawnedOnceConcurrently(t *testing.T, s engine.Store) {
	const n = 6
	want := map[int64]bool{}
	for range n {
		want[failFinally(t, s, insert(t, s, engine.JobInsertParams{Key: "k", Rollback: "undo"})).ID] = true
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { _, errs[i] = engine.SpawnRollbacks(t.Context(), s) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("SpawnRollbacks: %v", err)
		}
	}
	all, err := s.JobList(t.Context(), engine.JobListParams{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	of := map[int64]int{}
	for _, j := range all {
		if j.RollbackOf != nil {
			of[*j.RollbackOf]++
		}
	}
	for id := range want {
		if of[id] != 1 {
			t.Errorf("job %d has %d rollback jobs, want 1", id, of[id])
		}
	}
	if len(of) != n {
		t.Errorf("rollback jobs of %d jobs, want %d", len(of), n)
	}
}

func testRollbackSetGuarded(t *testing.T, s engine.Store) {
	f := failFinally(t, s, insert(t, s, engine.JobInsertParams{Rollback: "undo"}))
	_, err := s.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: f.ID, Version: f.Version - 1, RollbackJobID: 99})
	wantErrIs(t, "stale version", err, engine.ErrConflict)
	got, err := s.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: f.ID, Version: f.Version, RollbackJobID: 99})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != f.Version+1 || got.RollbackJobID == nil || *got.RollbackJobID != 99 || got.Status != engine.StatusFailed {
		t.Errorf("after JobRollbackSet: %+v", got)
	}
	_, err = s.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: f.ID, Version: got.Version, RollbackJobID: 100})
	wantErrIs(t, "a second rollback job", err, engine.ErrConflict)
	_, err = s.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: 1 << 40, Version: 1, RollbackJobID: 100})
	wantErrIs(t, "unknown job", err, engine.ErrNotFound)
	finished := finish(t, s, start(t, s, queued(t, s, 1), "n1"), engine.RunSucceeded)
	_, err = s.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: finished.ID, Version: finished.Version, RollbackJobID: 100})
	wantErrIs(t, "a finished job", err, engine.ErrConflict)
	// In a transaction that fails, the record goes with it.
	f2 := failFinally(t, s, insert(t, s, engine.JobInsertParams{Rollback: "undo", Key: "k"}))
	later := insert(t, s, engine.JobInsertParams{Key: "k"})
	err = s.Tx(t.Context(), func(tx engine.TxStore) error {
		if _, err := tx.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: f2.ID, Version: f2.Version, RollbackJobID: 7}); err != nil {
			return err
		}
		return errRollBack
	})
	wantErrIs(t, "Tx", err, errRollBack)
	if got := get(t, s, f2.ID); got.RollbackJobID != nil || got.Version != f2.Version {
		t.Errorf("rolled back record left %v at version %d", got.RollbackJobID, got.Version)
	}
	wantIDs(t, "still blocked", dispatchable(t, s, engine.StatusQueued, nil, 0))
	_ = later
}

// A requeue forgets the rollback job, so a new final failure rolls back again.
func testRollbackRequeueRollsBackAgain(t *testing.T, s engine.Store) {
	f := failFinally(t, s, insert(t, s, engine.JobInsertParams{Key: "k", Rollback: "undo"}))
	first := spawn(t, s)
	if len(first) != 1 {
		t.Fatalf("made %d", len(first))
	}
	f = admin(t, s, get(t, s, f.ID), engine.VerbRequeue)
	if f.RollbackJobID != nil {
		t.Fatalf("requeued job keeps rollback job %d", *f.RollbackJobID)
	}
	// The requeued job comes before its own first rollback in the key.
	wantIDs(t, "requeued before its rollback", dispatchable(t, s, engine.StatusRestart, nil, 0), f)
	wantIDs(t, "its rollback waits", dispatchable(t, s, engine.StatusQueued, nil, 0))
	failFinally(t, s, f)
	second := spawn(t, s)
	if len(second) != 1 || second[0].ID == first[0].ID {
		t.Fatalf("after the second failure made %v", ids(second))
	}
}

func testDoubleFaultFilter(t *testing.T, s engine.Store) {
	double := failFinally(t, s, insert(t, s, engine.JobInsertParams{Key: "k", Rollback: "undo", Creator: "bob"}))
	undone := failFinally(t, s, insert(t, s, engine.JobInsertParams{Key: "j", Rollback: "undo", Creator: "bob"}))
	failFinally(t, s, insert(t, s, engine.JobInsertParams{Creator: "bob"}))
	made := spawn(t, s)
	if len(made) != 2 {
		t.Fatalf("made %d rollback jobs, want 2", len(made))
	}
	for _, r := range made {
		if *r.RollbackOf == double.ID {
			finish(t, s, start(t, s, r, "n1"), engine.RunFailed)
		} else {
			finish(t, s, start(t, s, r, "n1"), engine.RunSucceeded)
		}
	}
	list := func(p engine.JobListParams) []*engine.Job {
		t.Helper()
		jobs, err := s.JobList(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	wantIDs(t, "double faults", list(engine.JobListParams{DoubleFault: true}), double)
	wantIDs(t, "double faults of another key", list(engine.JobListParams{DoubleFault: true, Key: "j"}))
	wantIDs(t, "failed double faults of bob", list(engine.JobListParams{DoubleFault: true, Creator: "bob",
		Statuses: []engine.Status{engine.StatusFailed}}), double)
	counts, err := s.JobCountByStatus(t.Context(), engine.JobListParams{DoubleFault: true})
	if err != nil || counts[engine.StatusFailed] != 1 || len(counts) != 1 {
		t.Errorf("double faults by status: %v, %v", counts, err)
	}
	jobs := []*engine.Job{get(t, s, double.ID), get(t, s, undone.ID)}
	if err := engine.MarkDoubleFaults(t.Context(), s, jobs); err != nil {
		t.Fatal(err)
	}
	if !jobs[0].DoubleFault || jobs[1].DoubleFault {
		t.Errorf("double fault marks %v, %v; want true, false", jobs[0].DoubleFault, jobs[1].DoubleFault)
	}
}

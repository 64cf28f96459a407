package storetest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var batchTests = []subtest{
	{"JobUpdateManyEmpty", testJobUpdateManyEmpty},
	{"JobUpdateManyMixed", testJobUpdateManyMixed},
	{"JobUpdateManyLarge", testJobUpdateManyLarge},
	{"JobUpdateManyAsOneByOne", testJobUpdateManyAsOneByOne},
	{"JobUpdateManyDatabaseClock", testJobUpdateManyDatabaseClock},
	{"JobUpdateManyRace", testJobUpdateManyRace},
	{"JobUpdateManyQuiet", testJobUpdateManyQuiet},
	{"JobStartMany", testJobStartMany},
}

// JobStartMany applies what JobUpdateMany would and reports the same
// outcome per transition, each started job as engine.Job.Started makes it
// of the stored job: a batch of a node's starts alone, and one with another
// transition beside them, which some stores apply another way. A start
// from RESTART after a measured failed run reads back none of that run,
// and how long it waited counts from the end of its backoff.
func testJobStartMany(t *testing.T, s engine.Store) {
	ctx := t.Context()
	parent := queued(t, s, 1)
	rich := func() *engine.Job {
		return insert(t, s, engine.JobInsertParams{Type: engine.TypeExec, Operation: "copy", Args: []string{"cp", "a b", "c"},
			Payload: []byte(`{"x":1}`), Load: 2.5, Priority: 70, Key: "k-" + fmt.Sprint(rand.Int64()), ParentID: &parent.ID,
			MaxAttempts: 3, Backoff: 2 * time.Second, Rollback: "undo", Timeout: time.Minute, Creator: "ops@host",
			MemoryLimit: 1 << 30})
	}
	failed := start(t, s, rich(), "n0")
	failed = apply(t, s, engine.OutcomeUpdate(failed, engine.RunResult{ExitCode: 3, Outcome: engine.RunFailed,
		Reason: "exit code 3", Usage: &engine.Usage{CPUSeconds: 1, PeakMemory: 1 << 20, WallSeconds: 2}}, false, func() float64 { return 0 }))
	if failed.Status != engine.StatusRestart {
		t.Fatalf("the failed run left its job %s, want RESTART", failed.Status)
	}
	for _, withCancel := range []bool{false, true} {
		fresh, plain, stale := rich(), queued(t, s, 1), start(t, s, queued(t, s, 1), "n0")
		us := []engine.JobUpdate{
			engine.QueuedStartUpdate(fresh, "n1"),
			engine.QueuedStartUpdate(plain, "n1"),
			{ID: stale.ID, From: engine.StatusQueued, Version: stale.Version - 1, To: engine.StatusRunning, Node: engine.Ptr("n1"),
				IncrementAttempt: true, MarkStarted: true},
		}
		if !withCancel {
			us = append(us, engine.QueuedStartUpdate(failed, "n1"))
		} else {
			us = append(us, engine.JobUpdate{ID: queued(t, s, 1).ID, From: engine.StatusQueued, Version: 1,
				To: engine.StatusCancelled, MarkFinished: true})
		}
		res, err := s.JobStartMany(ctx, us)
		if err != nil || len(res) != len(us) {
			t.Fatalf("JobStartMany: %d results, %v; want %d", len(res), err, len(us))
		}
		wantErrIs(t, fmt.Sprintf("with a cancel %v: the stale start", withCancel), res[2].Err, engine.ErrConflict)
		for _, i := range []int{0, 1, 3} {
			r := res[i]
			if r.Err != nil || r.Job == nil {
				t.Errorf("with a cancel %v: result %d: %+v; want a job", withCancel, i, r)
				continue
			}
			stored := get(t, s, us[i].ID)
			if view := stored.Started(); !reflect.DeepEqual(r.Job, view) {
				t.Errorf("with a cancel %v: result %d is\n%+v\nwant the stored job as it started\n%+v", withCancel, i, r.Job, view)
			}
			if us[i].To == engine.StatusRunning && (stored.Status != engine.StatusRunning || stored.Node != "n1") {
				t.Errorf("with a cancel %v: job %d is %s on %q, want RUNNING on n1", withCancel, stored.ID, stored.Status, stored.Node)
			}
		}
		if got := res[0].Job; !withCancel && (got.Key != fresh.Key || got.Priority != 70 || got.MemoryLimit != 1<<30 ||
			got.Operation != "copy" || len(got.Args) != 3 || got.Attempt != 1 || got.Waited < 0) {
			t.Errorf("the rich job started as %+v", got)
		}
		if got := res[3].Job; !withCancel && (got.Attempt != 2 || got.ExitCode != nil || got.Usage != nil) {
			t.Errorf("the retried job started as %+v, want attempt 2 with no exit code or usage", got)
		}
	}
}

// JobUpdateManyQuiet applies what JobUpdateMany would and reports the same
// outcome per transition, only without the jobs.
func testJobUpdateManyQuiet(t *testing.T, s engine.Store) {
	applied1, stale, forbidden, applied2 := queued(t, s, 1), queued(t, s, 1), queued(t, s, 1), queued(t, s, 1)
	stale = start(t, s, stale, "n0")
	us := []engine.JobUpdate{
		engine.QueuedStartUpdate(applied1, "n1"),
		{ID: stale.ID, From: engine.StatusRunning, Version: stale.Version - 1, To: engine.StatusFinished, MarkFinished: true},
		{ID: 424242, From: engine.StatusQueued, Version: 1, To: engine.StatusRunning, Node: engine.Ptr("n1")},
		{ID: forbidden.ID, From: engine.StatusQueued, Version: forbidden.Version, To: engine.StatusFinished, MarkFinished: true},
		engine.QueuedStartUpdate(applied2, "n2"),
	}
	res, err := s.JobUpdateManyQuiet(t.Context(), us)
	if err != nil || len(res) != len(us) {
		t.Fatalf("JobUpdateManyQuiet: %d results, %v; want %d", len(res), err, len(us))
	}
	for i, r := range res {
		if r.Job != nil {
			t.Errorf("result %d carries a job: %+v", i, r.Job)
		}
	}
	for i, j := range map[int]*engine.Job{0: applied1, 4: applied2} {
		if res[i].Err != nil {
			t.Errorf("result %d (job %d): %v, want applied", i, j.ID, res[i].Err)
		}
		if got := get(t, s, j.ID); got.Status != engine.StatusRunning || got.Version != j.Version+1 || got.Node != *us[i].Node {
			t.Errorf("job %d after a quiet batch: %s version %d node %q; want RUNNING version %d node %q",
				j.ID, got.Status, got.Version, got.Node, j.Version+1, *us[i].Node)
		}
	}
	for _, i := range []int{1, 2} {
		wantErrIs(t, fmt.Sprintf("result %d (job %d)", i, us[i].ID), res[i].Err, engine.ErrConflict)
	}
	if got := get(t, s, stale.ID); got.Version != stale.Version || got.Status != engine.StatusRunning {
		t.Errorf("the stale update changed job %d: %s version %d", stale.ID, got.Status, got.Version)
	}
	var te *engine.TransitionError
	if !errors.As(res[3].Err, &te) || te.ID != forbidden.ID {
		t.Errorf("QUEUED → FINISHED in a quiet batch: got %v, want its *TransitionError", res[3].Err)
	}
}

// updateMany applies a batch, failing the test when the call itself fails
// or returns a result count other than the batch's.
func updateMany(t *testing.T, s engine.Store, us []engine.JobUpdate) []engine.JobUpdateResult {
	t.Helper()
	res, err := s.JobUpdateMany(t.Context(), us)
	if err != nil {
		t.Fatalf("JobUpdateMany of %d updates: %v", len(us), err)
	}
	if len(res) != len(us) {
		t.Fatalf("JobUpdateMany of %d updates returned %d results", len(us), len(res))
	}
	return res
}

// insertMany creates n queued noop jobs in one transaction.
func insertMany(t *testing.T, s engine.Store, n int) []*engine.Job {
	t.Helper()
	jobs := make([]*engine.Job, 0, n)
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		jobs = jobs[:0] // a retried transaction starts over
		for range n {
			j, err := tx.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: 1})
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("insert %d jobs: %v", n, err)
	}
	return jobs
}

func testJobUpdateManyEmpty(t *testing.T, s engine.Store) {
	for _, us := range [][]engine.JobUpdate{nil, {}} {
		res, err := s.JobUpdateMany(t.Context(), us)
		if err != nil || len(res) != 0 {
			t.Errorf("JobUpdateMany(%#v) = %v, %v; want no results and no error", us, res, err)
		}
	}
}

// testJobUpdateManyMixed has one batch hold every kind of outcome: applied,
// a stale version, a status the job has left, a job that does not exist,
// a transition the state machine forbids and a run_after that is no
// number. Each gets its own verdict, in the order of the batch, and only
// the applied ones change anything.
func testJobUpdateManyMixed(t *testing.T, s engine.Store) {
	applied1, stale, left, applied2, forbidden, nan := queued(t, s, 1), queued(t, s, 1), queued(t, s, 1),
		queued(t, s, 1), queued(t, s, 1), queued(t, s, 1)
	left = move(t, s, left, engine.StatusCancelled, nil)
	stale = start(t, s, stale, "n0")
	before := map[int64]*engine.Job{}
	for _, j := range []*engine.Job{stale, left, forbidden, nan} {
		before[j.ID] = get(t, s, j.ID)
	}
	us := []engine.JobUpdate{
		engine.QueuedStartUpdate(applied1, "n1"),
		{ID: stale.ID, From: engine.StatusRunning, Version: stale.Version - 1, To: engine.StatusFinished, MarkFinished: true},
		{ID: left.ID, From: engine.StatusQueued, Version: left.Version, To: engine.StatusRunning, Node: engine.Ptr("n1")},
		{ID: 424242, From: engine.StatusQueued, Version: 1, To: engine.StatusRunning, Node: engine.Ptr("n1")},
		{ID: forbidden.ID, From: engine.StatusQueued, Version: forbidden.Version, To: engine.StatusFinished, MarkFinished: true},
		{ID: nan.ID, From: engine.StatusQueued, Version: nan.Version, To: engine.StatusPaused, RunAfterSeconds: engine.Ptr(math.NaN())},
		engine.QueuedStartUpdate(applied2, "n2"),
	}
	res := updateMany(t, s, us)

	for i, j := range map[int]*engine.Job{0: applied1, 6: applied2} {
		r := res[i]
		if r.Err != nil || r.Job == nil {
			t.Errorf("result %d (job %d): %v, want applied", i, j.ID, r.Err)
			continue
		}
		if r.Job.ID != j.ID || r.Job.Status != engine.StatusRunning || r.Job.Version != j.Version+1 || r.Job.Node != *us[i].Node {
			t.Errorf("result %d: job %d %s version %d node %q; want job %d RUNNING version %d node %q",
				i, r.Job.ID, r.Job.Status, r.Job.Version, r.Job.Node, j.ID, j.Version+1, *us[i].Node)
		}
		if got := get(t, s, j.ID); !reflect.DeepEqual(got, r.Job) {
			t.Errorf("result %d differs from the stored job:\n result %+v\n stored %+v", i, r.Job, got)
		}
	}
	for _, i := range []int{1, 2, 3} {
		if res[i].Job != nil {
			t.Errorf("result %d: a job came back for an update that did not apply: %+v", i, res[i].Job)
		}
		wantErrIs(t, fmt.Sprintf("result %d (job %d)", i, us[i].ID), res[i].Err, engine.ErrConflict)
	}
	var te *engine.TransitionError
	if !errors.As(res[4].Err, &te) || te.ID != forbidden.ID || te.To != engine.StatusFinished {
		t.Errorf("QUEUED → FINISHED in a batch: got %v, want its *TransitionError", res[4].Err)
	}
	if res[5].Err == nil || errors.Is(res[5].Err, engine.ErrConflict) || res[5].Job != nil {
		t.Errorf("run after NaN seconds in a batch: got %v, %v; want an error of its own", res[5].Job, res[5].Err)
	}
	for id, want := range before {
		if got := get(t, s, id); !reflect.DeepEqual(got, want) {
			t.Errorf("an update that did not apply changed job %d:\n now  %+v\n want %+v", id, got, want)
		}
	}
}

// testJobUpdateManyLarge claims more jobs in one call than one statement
// carries, with conflicts spread over the whole batch, so every chunk has
// its verdicts in the right places.
func testJobUpdateManyLarge(t *testing.T, s engine.Store) {
	const n = 1500
	jobs := insertMany(t, s, n)
	us := make([]engine.JobUpdate, n)
	for i, j := range jobs {
		us[i] = engine.QueuedStartUpdate(j, fmt.Sprintf("n%d", i%7))
		if i%97 == 0 {
			us[i].Version-- // read before someone else moved it
		}
	}
	res := updateMany(t, s, us)
	stored := map[int64]*engine.Job{}
	for _, j := range listAll(t, s) {
		stored[j.ID] = j
	}
	for i, r := range res {
		j, want := jobs[i], us[i]
		if i%97 == 0 {
			wantErrIs(t, fmt.Sprintf("stale update %d (job %d)", i, j.ID), r.Err, engine.ErrConflict)
			if got := stored[j.ID]; !reflect.DeepEqual(got, j) {
				t.Errorf("a stale update changed job %d:\n now  %+v\n want %+v", j.ID, got, j)
			}
			continue
		}
		if r.Err != nil || r.Job == nil || r.Job.ID != j.ID || r.Job.Node != *want.Node || r.Job.Version != j.Version+1 {
			t.Fatalf("update %d (job %d to %s): got %+v, %v", i, j.ID, *want.Node, r.Job, r.Err)
		}
		if !reflect.DeepEqual(stored[j.ID], r.Job) {
			t.Errorf("result %d differs from the stored job:\n result %+v\n stored %+v", i, r.Job, stored[j.ID])
		}
	}
}

// testJobUpdateManyDatabaseClock: the times a batch sets come from the
// database's clock at the call, as JobUpdate's do.
func testJobUpdateManyDatabaseClock(t *testing.T, s engine.Store) {
	// Jobs that ran before, so each has a FinishedAt the batch must keep
	// unless it says otherwise.
	ranBefore := func() *engine.Job {
		j := start(t, s, queued(t, s, 1), "n1")
		j = move(t, s, j, engine.StatusFailed, func(u *engine.JobUpdate) { u.MarkFinished = true })
		return move(t, s, j, engine.StatusRestart, nil)
	}
	dispatched := ranBefore()
	running := start(t, s, queued(t, s, 1), "n1")
	failing := start(t, s, ranBefore(), "n1")
	putBack := move(t, s, queued(t, s, 1), engine.StatusPaused, nil)

	before := dbNow(t, s)
	res := updateMany(t, s, []engine.JobUpdate{
		engine.QueuedStartUpdate(dispatched, "n1"),
		{ID: running.ID, From: running.Status, Version: running.Version, To: engine.StatusFinished, ExitCode: engine.Ptr(0), MarkFinished: true},
		{ID: failing.ID, From: failing.Status, Version: failing.Version, To: engine.StatusRestart, ExitCode: engine.Ptr(2),
			RunAfterSeconds: engine.Seconds(90 * time.Second), Node: engine.Ptr("")},
		{ID: putBack.ID, From: putBack.Status, Version: putBack.Version, To: engine.StatusQueued, Node: engine.Ptr(""), MarkQueued: true},
	})
	after := dbNow(t, s)
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("update %d: %v", i, r.Err)
		}
	}
	inCall := func(what string, v *time.Time, offset time.Duration) {
		t.Helper()
		slack := time.Millisecond // SQLite keeps milliseconds
		switch {
		case v == nil:
			t.Errorf("%s is not set", what)
		case !within(*v, before.Add(offset-slack), after.Add(offset+slack)):
			t.Errorf("%s = %s, want within [%s, %s] + %s", what, v, before, after, offset)
		default:
			wantUTC(t, what, *v)
		}
	}
	inCall("StartedAt", res[0].Job.StartedAt, 0)
	inCall("FinishedAt", res[1].Job.FinishedAt, 0)
	inCall("RunAfter", res[2].Job.RunAfter, 90*time.Second)
	inCall("QueuedAt", res[3].Job.QueuedAt, 0)
	// The fields the updates do not name keep their times.
	if got, was := res[0].Job.FinishedAt, dispatched.FinishedAt; !reflect.DeepEqual(got, was) {
		t.Errorf("a start changed FinishedAt from %v to %v", was, got)
	}
	if got, was := res[2].Job.FinishedAt, failing.FinishedAt; !reflect.DeepEqual(got, was) {
		t.Errorf("a retry without MarkFinished changed FinishedAt from %v to %v", was, got)
	}
}

// testJobUpdateManyRace has several dispatchers claim overlapping sets of
// jobs from the same read, round after round: each job goes to exactly
// one of them per round, its version moves on by exactly one, and it ends
// with the winner's node.
func testJobUpdateManyRace(t *testing.T, s engine.Store) {
	const (
		jobs    = 60
		racers  = 4
		span    = 30 // each racer claims this many jobs, overlapping its neighbours
		rounds  = 4
		stride  = (jobs - span) / (racers - 1)
		perNode = "racer%d"
	)
	current := insertMany(t, s, jobs)
	for round := range rounds {
		var (
			wg       sync.WaitGroup
			startGun = make(chan struct{})
			results  = make([][]engine.JobUpdateResult, racers)
			errs     = make([]error, racers)
			batches  = make([][]engine.JobUpdate, racers)
		)
		for r := range racers {
			for k := range span {
				i := r*stride + k
				if r%2 == 1 {
					i = r*stride + span - 1 - k // the other way round: locks wanted in opposite orders
				}
				batches[r] = append(batches[r], raceUpdate(current[i], fmt.Sprintf(perNode, r)))
			}
			wg.Go(func() {
				<-startGun
				results[r], errs[r] = s.JobUpdateMany(t.Context(), batches[r])
			})
		}
		close(startGun)
		wg.Wait()
		winners := map[int64][]int{}
		for r := range racers {
			if errs[r] != nil {
				t.Fatalf("round %d racer %d: %v", round, r, errs[r])
			}
			for k, res := range results[r] {
				id := batches[r][k].ID
				switch {
				case res.Err == nil:
					winners[id] = append(winners[id], r)
				case !errors.Is(res.Err, engine.ErrConflict):
					t.Errorf("round %d racer %d job %d: %v, want a win or ErrConflict", round, r, id, res.Err)
				}
			}
		}
		stored := map[int64]*engine.Job{}
		for _, j := range listAll(t, s) {
			stored[j.ID] = j
		}
		for i, was := range current {
			got := stored[was.ID]
			w := winners[was.ID]
			if len(w) != 1 {
				t.Fatalf("round %d job %d: won by racers %v, want exactly one", round, was.ID, w)
			}
			wantNode := fmt.Sprintf(perNode, w[0])
			if was.Status == engine.StatusRunning {
				wantNode = "" // put back in the queue by the winner
			}
			if got.Version != was.Version+1 || got.Node != wantNode {
				t.Fatalf("round %d job %d: version %d node %q; want %d and node %q",
					round, was.ID, got.Version, got.Node, was.Version+1, wantNode)
			}
			current[i] = got
		}
	}
}

// raceUpdate is a racer's claim of job j as read: a start on node for a
// job in the queue, and for one running a recovery back to the queue, so
// each round has something to race for.
func raceUpdate(j *engine.Job, node string) engine.JobUpdate {
	if j.Status == engine.StatusRunning {
		return engine.RecoverUpdate(j, "recovered by "+node)
	}
	return engine.QueuedStartUpdate(j, node)
}

// testJobUpdateManyAsOneByOne is what JobUpdateMany promises: random
// batches leave every job exactly as the same updates, applied one at a
// time with JobUpdate, leave its twin (a job with the same history). The
// times each sets must lie within its own call, on the database clock.
func testJobUpdateManyAsOneByOne(t *testing.T, s engine.Store) {
	const pairs, rounds = 40, 8
	rng := rand.New(rand.NewPCG(7, 0x6a6f6263746c))
	batchJobs, twins := make([]*engine.Job, pairs), make([]*engine.Job, pairs)
	for i := range pairs {
		p := engine.JobInsertParams{Load: 1, MaxAttempts: 3}
		if i%4 == 0 {
			p.Status = engine.StatusInstantiated
		}
		batchJobs[i], twins[i] = insert(t, s, p), insert(t, s, p)
	}
	seen := map[string]int{}
	for round := range rounds {
		for i := range pairs {
			if batchJobs[i].Status == engine.StatusRunning && rng.IntN(2) == 0 {
				batchJobs[i], twins[i] = reportProgress(t, s, batchJobs[i], twins[i], rng.IntN(101))
			}
		}
		// Most jobs take part, in a random order, with a job that does not exist.
		var batch, singles []engine.JobUpdate
		var of []int // the pair of each update, -1 for none
		for _, i := range rng.Perm(pairs) {
			if rng.IntN(5) == 0 {
				continue
			}
			u := randomUpdate(rng, batchJobs[i])
			twin := u
			twin.ID, twin.Version = twins[i].ID, u.Version-batchJobs[i].Version+twins[i].Version
			batch, singles, of = append(batch, u), append(singles, twin), append(of, i)
		}
		missing := engine.JobUpdate{ID: 1<<40 + int64(round), From: engine.StatusQueued, Version: 1, To: engine.StatusRunning}
		batch, singles, of = append(batch, missing), append(singles, missing), append(of, -1)

		batchFrom := dbNow(t, s)
		res := updateMany(t, s, batch)
		batchTo := dbNow(t, s)
		for k, u := range singles {
			singleFrom := dbNow(t, s)
			got, err := s.JobUpdate(t.Context(), u)
			singleTo := dbNow(t, s)
			what := fmt.Sprintf("round %d update %s", round, describe(batch[k]))
			if verdict(err, true) != verdict(res[k].Err, false) {
				t.Fatalf("%s: JobUpdateMany says %v, JobUpdate says %v", what, res[k].Err, err)
			}
			seen[verdict(err, true)]++
			i := of[k]
			if err != nil {
				continue
			}
			wantTimes(t, what+" (batch)", batchJobs[i], res[k].Job, batch[k], batchFrom, batchTo)
			wantTimes(t, what+" (one by one)", twins[i], got, u, singleFrom, singleTo)
			batchJobs[i], twins[i] = res[k].Job, got
		}
		for i := range pairs {
			b, one := get(t, s, batchJobs[i].ID), get(t, s, twins[i].ID)
			if !reflect.DeepEqual(b, batchJobs[i]) {
				t.Fatalf("round %d: job %d is not as JobUpdateMany returned it:\n stored   %+v\n returned %+v", round, b.ID, b, batchJobs[i])
			}
			if !sameButIDAndTimes(b, one) {
				t.Fatalf("round %d: the batch and one-by-one updates disagree:\n batch      %+v\n one by one %+v", round, b, one)
			}
		}
	}
	// The random batches must have tried every outcome, or the test
	// proved less than it claims.
	for _, v := range []string{"applied", "conflict", "invalid"} {
		if seen[v] < 5 {
			t.Errorf("only %d updates %s in the random batches (%v)", seen[v], v, seen)
		}
	}
}

// verdict classes an update's outcome so a batch's and JobUpdate's can be
// compared: JobUpdate tells an unknown job from a conflict, a batch calls
// both a conflict.
func verdict(err error, single bool) string {
	switch {
	case err == nil:
		return "applied"
	case errors.Is(err, engine.ErrConflict), single && errors.Is(err, engine.ErrNotFound):
		return "conflict"
	case errors.Is(err, engine.ErrInvalidTransition):
		return "invalid"
	}
	return "error: " + err.Error()
}

// reportProgress records the same progress on a running job and its twin.
func reportProgress(t *testing.T, s engine.Store, j, twin *engine.Job, progress int) (*engine.Job, *engine.Job) {
	t.Helper()
	for _, x := range []*engine.Job{j, twin} {
		err := s.JobProgressSet(t.Context(), engine.JobProgressParams{ID: x.ID, Attempt: x.Attempt, Node: x.Node,
			Progress: progress, Message: "half way"})
		if err != nil && !errors.Is(err, engine.ErrConflict) {
			t.Fatalf("JobProgressSet(%d): %v", x.ID, err)
		}
	}
	return get(t, s, j.ID), get(t, s, twin.ID)
}

// randomUpdate is a random transition of j with random fields: mostly one
// the state machine allows from j's status and version, sometimes one
// read before the job moved on (a stale version, or another status), and
// sometimes one it forbids.
func randomUpdate(rng *rand.Rand, j *engine.Job) engine.JobUpdate {
	u := engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version}
	switch rng.IntN(20) {
	case 0:
		u.To = pick(rng, targets(j.Status, false))
	case 1:
		u.Version--
		u.To = pick(rng, append(targets(j.Status, true), engine.StatusCancelled))
	case 2:
		for u.From == j.Status || len(targets(u.From, true)) == 0 {
			u.From = pick(rng, engine.AllStatuses)
		}
		u.To = pick(rng, targets(u.From, true))
	default:
		if to := targets(j.Status, true); len(to) > 0 {
			u.To = pick(rng, to)
		} else {
			u.To = pick(rng, targets(j.Status, false))
		}
	}
	if rng.IntN(3) > 0 {
		u.Node = engine.Ptr(pick(rng, []string{"", "n1", "n2", "nœud-✓"}))
	}
	// A requeue rebases attempts but never increments them (see JobUpdate).
	switch rng.IntN(6) {
	case 0, 1:
		u.IncrementAttempt = true
	case 2:
		u.RebaseAttempts = true
	}
	if rng.IntN(3) == 0 {
		u.ExitCode = engine.Ptr(pick(rng, []int{0, 1, 3, -1, 255}))
	}
	if rng.IntN(3) > 0 {
		u.Message = engine.Ptr(pick(rng, []string{"", "done", "exit status 3, retrying",
			"quote \" backslash \\ tab\t newline\n ünïcødé 🚀"}))
	}
	if rng.IntN(4) == 0 {
		u.RunAfterSeconds = engine.Ptr(pick(rng, []float64{0, 0.001, 1.5, 3600, -2.5}))
	}
	u.ClearResult = rng.IntN(5) == 0
	u.MarkQueued = rng.IntN(5) == 0
	u.MarkStarted = rng.IntN(5) == 0
	u.MarkFinished = rng.IntN(5) == 0
	return u
}

// targets lists the statuses the state machine allows (or forbids) from.
func targets(from engine.Status, allowed bool) []engine.Status {
	var out []engine.Status
	for _, to := range engine.AllStatuses {
		if engine.CanTransition(from, to) == allowed {
			out = append(out, to)
		}
	}
	return out
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

// wantTimes checks the times an applied update left: each one it sets lies
// within [from, to] on the database clock (plus run_after's offset), each
// one it clears is gone, and every other is as before.
func wantTimes(t *testing.T, what string, before, after *engine.Job, u engine.JobUpdate, from, to time.Time) {
	t.Helper()
	check := func(field string, was, now *time.Time, set, clear bool, offset time.Duration) {
		t.Helper()
		slack := time.Millisecond // SQLite keeps milliseconds
		switch {
		case set && (now == nil || !within(*now, from.Add(offset-slack), to.Add(offset+slack))):
			t.Errorf("%s: %s = %v, want within [%s, %s] + %s", what, field, now, from, to, offset)
		case !set && clear && now != nil:
			t.Errorf("%s: %s = %s, want it cleared", what, field, now)
		case !set && !clear && !reflect.DeepEqual(was, now):
			t.Errorf("%s: %s changed from %v to %v", what, field, was, now)
		}
	}
	var offset time.Duration
	if u.RunAfterSeconds != nil {
		offset = time.Duration(*u.RunAfterSeconds * float64(time.Second))
	}
	check("RunAfter", before.RunAfter, after.RunAfter, u.RunAfterSeconds != nil, u.ClearResult, offset)
	check("FinishedAt", before.FinishedAt, after.FinishedAt, u.MarkFinished, u.ClearResult, 0)
	check("QueuedAt", before.QueuedAt, after.QueuedAt, u.MarkQueued, false, 0)
	check("StartedAt", before.StartedAt, after.StartedAt, u.MarkStarted, false, 0)
	check("CreatedAt", &before.CreatedAt, &after.CreatedAt, false, false, 0)
}

// sameButIDAndTimes compares a job with its twin: every field but the id
// and the times must match, and each time must be set in both or neither.
func sameButIDAndTimes(a, b *engine.Job) bool {
	x, y := *a, *b
	for _, j := range []*engine.Job{&x, &y} {
		j.ID, j.CreatedAt = 0, time.Time{}
		for _, tm := range []**time.Time{&j.RunAfter, &j.QueuedAt, &j.StartedAt, &j.FinishedAt} {
			if *tm != nil {
				*tm = &time.Time{}
			}
		}
	}
	return reflect.DeepEqual(x, y)
}

// describe prints an update with the values its optional fields point to.
func describe(u engine.JobUpdate) string {
	opt := func(name string, p any) string {
		v := reflect.ValueOf(p)
		if v.IsNil() {
			return ""
		}
		return fmt.Sprintf(" %s=%#v", name, v.Elem().Interface())
	}
	return fmt.Sprintf("{job %d %s v%d → %s%s%s%s%s increment=%v rebase=%v clear=%v queued=%v started=%v finished=%v}",
		u.ID, u.From, u.Version, u.To, opt("node", u.Node), opt("exit", u.ExitCode), opt("message", u.Message),
		opt("run_after", u.RunAfterSeconds), u.IncrementAttempt, u.RebaseAttempts, u.ClearResult, u.MarkQueued,
		u.MarkStarted, u.MarkFinished)
}

package dbstore

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// The checks JobUpdateMany makes before it sends anything are the same on
// every backend, so SQLite stands for all three here; the conformance
// suite holds the statements themselves to JobUpdate on each.

func TestJobUpdateManyRefusesTwoUpdatesOfOneJob(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	a := insertQueued(t, s)
	b := insertQueued(t, s)
	res, err := s.JobUpdateMany(t.Context(), []engine.JobUpdate{
		engine.QueuedStartUpdate(a, "n1"), engine.QueuedStartUpdate(b, "n1"), engine.QueuedStartUpdate(a, "n2"),
	})
	if err == nil || res != nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("JobUpdateMany with job %d twice = %v, %v; want an error for the call", a.ID, res, err)
	}
	for _, j := range []*engine.Job{a, b} {
		if got, _ := s.JobGet(t.Context(), j.ID); !reflect.DeepEqual(got, j) {
			t.Errorf("a refused call changed job %d:\n now  %+v\n want %+v", j.ID, got, j)
		}
	}
}

// The updates a batch sends are in id order, whatever order the call gave
// them in, so that two batches over the same jobs take their row locks
// alike and wait for each other rather than deadlock; an update refused
// is answered at its own place in the call.
func TestCheckJobUpdatesSendsInIDOrder(t *testing.T) {
	t.Parallel()
	node := "n1"
	start := func(id int64) engine.JobUpdate {
		return engine.JobUpdate{ID: id, From: engine.StatusQueued, To: engine.StatusRunning, Version: 1, Node: &node}
	}
	us := []engine.JobUpdate{start(30), start(10), start(50), start(20), start(40)}
	us[2].To = engine.StatusQueued // QUEUED to QUEUED: no transition
	out := make([]engine.JobUpdateResult, len(us))
	send, err := checkJobUpdates(us, out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, u := range send {
		ids = append(ids, u.ID)
	}
	if !slices.Equal(ids, []int64{10, 20, 30, 40}) {
		t.Errorf("sent the jobs %v; want 10, 20, 30, 40 in that order", ids)
	}
	for i, r := range out {
		if refused := r.Err != nil; refused != (i == 2) {
			t.Errorf("update %d (job %d): error %v; want one for the third update alone", i, us[i].ID, r.Err)
		}
	}

	// A batch in id order already goes as it is, less what is refused.
	sorted := []engine.JobUpdate{start(10), start(20), start(30)}
	if send, err := checkJobUpdates(sorted, make([]engine.JobUpdateResult, 3)); err != nil || len(send) != 3 || &send[0] != &sorted[0] {
		t.Errorf("a batch in id order: sent %v, %v; want the batch itself", send, err)
	}
	sorted[1].To = engine.StatusQueued
	out = make([]engine.JobUpdateResult, 3)
	send, err = checkJobUpdates(sorted, out)
	if err != nil || len(send) != 2 || send[0].ID != 10 || send[1].ID != 30 || out[1].Err == nil || out[0].Err != nil || out[2].Err != nil {
		t.Errorf("a batch in id order with its second update refused: sent %v, %v, answers %v; want 10 and 30 sent and the second refused", send, err, out)
	}
	sorted[1] = start(10)
	if _, err := checkJobUpdates(sorted, make([]engine.JobUpdateResult, 3)); err == nil {
		t.Error("job 10 twice, the second time right after the first: no error")
	}
}

// Text PostgreSQL would refuse, and a run_after no backend can hold, fail
// their own update, not the whole batch.
func TestJobUpdateManyRefusesWhatCannotBeStored(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	bad := map[string]engine.JobUpdate{}
	for name, edit := range map[string]func(u *engine.JobUpdate){
		"invalid UTF-8 message": func(u *engine.JobUpdate) { u.Message = engine.Ptr("exit \xff") },
		"NUL in a message":      func(u *engine.JobUpdate) { u.Message = engine.Ptr("a\x00b") },
		"invalid UTF-8 node":    func(u *engine.JobUpdate) { u.Node = engine.Ptr("n\xc3") },
		"run after +Inf":        func(u *engine.JobUpdate) { u.RunAfterSeconds = engine.Ptr(math.Inf(1)) },
		"run after 1e11":        func(u *engine.JobUpdate) { u.RunAfterSeconds = engine.Ptr(1e11) },
	} {
		u := engine.QueuedStartUpdate(insertQueued(t, s), "n1")
		edit(&u)
		bad[name] = u
	}
	good := insertQueued(t, s)
	us := []engine.JobUpdate{engine.QueuedStartUpdate(good, "n1")}
	var names []string
	for name, u := range bad {
		us, names = append(us, u), append(names, name)
	}
	res, err := s.JobUpdateMany(t.Context(), us)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].Job.Status != engine.StatusRunning {
		t.Errorf("the valid update beside them: %+v, %v; want applied", res[0].Job, res[0].Err)
	}
	for i, name := range names {
		var te *engine.TransitionError
		if r := res[i+1]; !errors.As(r.Err, &te) || te.Reason == "" || r.Job != nil {
			t.Errorf("%s: got %v, %v; want a *TransitionError with its reason", name, r.Job, r.Err)
		}
		if got, _ := s.JobGet(t.Context(), us[i+1].ID); got.Status != engine.StatusQueued {
			t.Errorf("%s: the refused update made the job %s", name, got.Status)
		}
	}
}

func insertQueued(t *testing.T, s *Store) *engine.Job {
	t.Helper()
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Bulk inserts refresh the statistics once 10,000 jobs went in, however
// they were split, and again each time the count doubles.
func TestAnalyzeDue(t *testing.T) {
	s := &Store{conn: &conn{}}
	var due []int64
	for i := 1; i <= 100; i++ {
		if s.analyzeDue(1000) {
			due = append(due, int64(i*1000))
		}
	}
	want := []int64{10000, 20000, 40000, 80000}
	if !slices.Equal(due, want) {
		t.Errorf("refreshed after %v jobs; want %v", due, want)
	}
}

// The refresh that a bulk insert makes on PostgreSQL samples a small part
// of the table: a histogram of refreshSampleTarget buckets, not of the
// server's default 100.
func TestBulkInsertRefreshesStatisticsFromASmallSample(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	ps := make([]engine.JobInsertParams, analyzeAfterRows)
	for i := range ps {
		ps[i] = engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: float64(i%7 + 1)}
	}
	if _, err := s.JobInsertMany(ctx, ps); err != nil {
		t.Fatal(err)
	}
	var bounds sql.NullInt64
	err := s.db.GetContext(ctx, &bounds, `SELECT cardinality(histogram_bounds::text::bigint[]) FROM pg_stats
		WHERE schemaname = current_schema() AND tablename = 'jobs' AND attname = 'id'`)
	if err != nil {
		t.Fatalf("reading the statistics of jobs.id: %v", err)
	}
	if !bounds.Valid || bounds.Int64 < 2 || bounds.Int64 > refreshSampleTarget+1 {
		t.Errorf("jobs.id has a histogram of %v bounds after %d jobs went in; want 2 to %d",
			bounds, analyzeAfterRows, refreshSampleTarget+1)
	}
}

// On PostgreSQL a chunk of starts alone, read back as started
// (JobStartMany), goes to job_start_many, and any other chunk to
// job_update_many (its "started" variant when read back as started); a start leaves the same row through either: from QUEUED
// and from RESTART (after a failed run with its exit code and usage), under
// a lease term or not, with a message or without. job_start_many reads
// back the started job (engine.Job.Started) of the row it wrote.
func TestPostgresStartManyAppliesStartsAsJobUpdateMany(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	term, err := s.LeaseAcquire(ctx, "d1", time.Hour)
	if err != nil || !term.Held() {
		t.Fatalf("LeaseAcquire = %v, %v", term, err)
	}
	// twin inserts a queued job, or one a failed run put back to RESTART.
	twin := func(restart bool) *engine.Job {
		j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued,
			MaxAttempts: 3, Load: 2})
		if err != nil || !restart {
			return j
		}
		run, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(j, "n0"))
		if err != nil {
			t.Fatal(err)
		}
		res := engine.RunResult{ExitCode: 3, Outcome: engine.RunFailed, Reason: "exit code 3",
			Usage: &engine.Usage{CPUSeconds: 1.5, PeakMemory: 1 << 20, WallSeconds: 2}}
		back, err := s.JobUpdate(ctx, engine.OutcomeUpdate(run, res, false, func() float64 { return 0 }))
		if err != nil || back.Status != engine.StatusRestart {
			t.Fatalf("the failed run's end: %+v, %v; want RESTART", back, err)
		}
		return back
	}
	// Each start of lean has its twin in general, made the same way.
	var lean, general []engine.JobUpdate
	for i := range 8 {
		for _, us := range []*[]engine.JobUpdate{&lean, &general} {
			u := engine.QueuedStartUpdate(twin(i%2 == 1), "n1")
			if i/2%2 == 1 {
				u.StartedUnder = &term
			}
			if i >= 4 {
				u.Message = nil
			}
			*us = append(*us, u)
		}
	}

	if got, _ := s.updateStatement(lean, readStarted); got != qJobStartMany {
		t.Errorf("a chunk of starts goes to %s, want %s", got, qJobStartMany)
	}
	cancel := engine.JobUpdate{ID: 1, From: engine.StatusQueued, Version: 1, To: engine.StatusCancelled, MarkFinished: true}
	if got, _ := s.updateStatement(append(slices.Clone(lean), cancel), readStarted); got != qJobUpdateManyStarted {
		t.Errorf("starts beside a cancel go to %s, want %s", got, qJobUpdateManyStarted)
	}
	if got, _ := s.updateStatement(lean, readWhole); got != qJobUpdateMany {
		t.Errorf("starts read back whole go to %s, want %s", got, qJobUpdateMany)
	}
	if got, _ := s.updateStatement(lean, readIDs); got != qJobUpdateManyIDs {
		t.Errorf("starts read back quietly go to %s, want %s", got, qJobUpdateManyIDs)
	}

	started := func(name string, a args, us []engine.JobUpdate) []*engine.Job {
		t.Helper()
		var jobs []*engine.Job
		if err := s.selectRows(ctx, s.q, &jobs, name, a, false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == qJobStartMany { // what the start wrote is set from the updates
			inOrder := slices.SortedFunc(slices.Values(us), func(a, b engine.JobUpdate) int { return cmp.Compare(a.ID, b.ID) })
			if err := setStarted(jobs, inOrder); err != nil {
				t.Fatal(err)
			}
		}
		byID := map[int64]*engine.Job{}
		addJobs(byID, jobs)
		out := make([]*engine.Job, len(us))
		for i, u := range us {
			if out[i] = byID[u.ID]; out[i] == nil {
				t.Fatalf("%s did not start job %d", name, u.ID)
			}
		}
		return out
	}
	got := started(qJobStartMany, jobStartArrays(lean), lean)
	want := started(qJobUpdateMany, jobUpdateArrays(general), general)
	for i := range got {
		// job_start_many reads back only what the node runs the job by;
		// the row it wrote is read whole.
		g, w := got[i], want[i]
		whole, err := s.JobGet(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		if view := whole.Started(); !reflect.DeepEqual(g, view) {
			t.Errorf("start %d read back\n%+v\nwant the started job\n%+v", i, g, view)
		}
		if w.StartedAt == nil || w.StartedAt.Before(*w.QueuedAt) || g.Waited < 0 {
			t.Errorf("start %d: started at %v, waited %v, want started after queued", i, w.StartedAt, g.Waited)
		}
		sameTwins(t, fmt.Sprintf("start %d", i), qJobStartMany, whole, qJobUpdateMany, w)
	}
}

// sameTwins compares two jobs made and changed alike, got through one
// statement and want through another, but for what differs between twins
// by nature: the id, and the times, which must be set or unset alike.
func sameTwins(t *testing.T, what, gotVia string, got *engine.Job, wantVia string, want *engine.Job) {
	t.Helper()
	g, w := *got, *want
	if (g.RunAfter == nil) != (w.RunAfter == nil) || (g.FinishedAt == nil) != (w.FinishedAt == nil) {
		t.Errorf("%s: run after %v and %v, finished at %v and %v", what, g.RunAfter, w.RunAfter, g.FinishedAt, w.FinishedAt)
	}
	for _, j := range []*engine.Job{&g, &w} {
		j.ID, j.CreatedAt, j.QueuedAt, j.StartedAt, j.FinishedAt, j.RunAfter = 0, time.Time{}, nil, nil, nil, nil
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s through %s:\n%+v\nthrough %s:\n%+v", what, gotVia, g, wantVia, w)
	}
}

// On PostgreSQL the ends of runs read back quietly, as a node records its
// results, go to job_end_many, and any other quiet chunk to
// job_update_many_ids; an end leaves the same row through either: each
// outcome of a run, with its usage or without, from RUNNING and from
// CANCELLING.
func TestPostgresEndManyAppliesEndsAsJobUpdateMany(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	usage := &engine.Usage{CPUSeconds: 1.5, PeakMemory: 1 << 20, WallSeconds: 2, OOMKilled: true}
	type end struct {
		res        engine.RunResult
		shutdown   bool
		cancelling bool
	}
	ends := []end{
		{res: engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceeded, Usage: usage}},
		{res: engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceededWithWarning, Warning: "low disk"}},
		{res: engine.RunResult{ExitCode: 3, Outcome: engine.RunFailed, Reason: "exit code 3", Usage: usage}},
		{res: engine.RunResult{ExitCode: -1, Outcome: engine.RunFailedFinally, Reason: "killed by SIGKILL"}},
		{res: engine.RunResult{ExitCode: -1, Outcome: engine.RunTimedOut, Reason: "timed out after 1s"}},
		{res: engine.RunResult{ExitCode: -1, Outcome: engine.RunCancelled, Reason: "cancelled"}, shutdown: true},
		{res: engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceeded}, cancelling: true},
	}
	// running inserts a job and starts it, then puts it to CANCELLING when
	// asked; a job with attempts to spare and a backoff goes to RESTART on
	// a failure, with a time to run after.
	running := func(cancelling bool) *engine.Job {
		j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued,
			MaxAttempts: 3, Backoff: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if j, err = s.JobUpdate(ctx, engine.QueuedStartUpdate(j, "n1")); err != nil {
			t.Fatal(err)
		}
		if cancelling {
			u := engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusCancelling}
			if j, err = s.JobUpdate(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		return j
	}
	half := func() float64 { return 0.5 }
	var lean, general []engine.JobUpdate
	for _, e := range ends {
		lean = append(lean, engine.OutcomeUpdate(running(e.cancelling), e.res, e.shutdown, half))
		general = append(general, engine.OutcomeUpdate(running(e.cancelling), e.res, e.shutdown, half))
	}

	if got, _ := s.updateStatement(lean, readIDs); got != qJobEndMany {
		t.Errorf("ends of runs read back quietly go to %s, want %s", got, qJobEndMany)
	}
	requeue := engine.JobUpdate{ID: 1, From: engine.StatusFailed, Version: 1, To: engine.StatusQueued, ClearResult: true, MarkQueued: true}
	if got, _ := s.updateStatement(append(slices.Clone(lean), requeue), readIDs); got != qJobUpdateManyIDs {
		t.Errorf("ends beside a requeue go to %s, want %s", got, qJobUpdateManyIDs)
	}
	if got, _ := s.updateStatement(lean, readWhole); got != qJobUpdateMany {
		t.Errorf("ends read back whole go to %s, want %s", got, qJobUpdateMany)
	}

	ended := func(name string, us []engine.JobUpdate) []*engine.Job {
		t.Helper()
		var ids []int64
		if err := s.selectRows(ctx, s.q, &ids, name, jobUpdateArrays(us), false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ids) != len(us) {
			t.Fatalf("%s changed %d of %d jobs", name, len(ids), len(us))
		}
		out := make([]*engine.Job, len(us))
		for i, u := range us {
			j, err := s.JobGet(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = j
		}
		return out
	}
	got, want := ended(qJobEndMany, lean), ended(qJobUpdateManyIDs, general)
	for i := range got {
		sameTwins(t, fmt.Sprintf("end %d", i), qJobEndMany, got[i], qJobUpdateManyIDs, want[i])
	}
}

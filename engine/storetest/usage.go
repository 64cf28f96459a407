package storetest

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var usageTests = []subtest{
	{"UsageTravelsWithTheEnd", testUsageTravelsWithTheEnd},
	{"UsageInBatches", testUsageInBatches},
	{"UsageOOMFilter", testUsageOOMFilter},
	{"UsageRefusesWhatCannotBeStored", testUsageRefusesWhatCannotBeStored},
	{"UsageListPerType", testUsageListPerType},
	{"MemoryLimitStored", testMemoryLimitStored},
	{"NodeTouchRunningUsage", testNodeTouchRunningUsage},
}

// measured is a run's result with a usage: the figures are unlike each
// other and survive every backend's column types exactly.
func measured(outcome engine.RunOutcome, cpu float64, peak int64, oom bool) engine.RunResult {
	res := engine.RunResult{Outcome: outcome, Reason: string(outcome),
		Usage: &engine.Usage{CPUSeconds: cpu, PeakMemory: peak, WallSeconds: cpu*2 + 0.25, OOMKilled: oom}}
	if outcome == engine.RunFailed {
		res.ExitCode = 1
	}
	if oom {
		res.ExitCode, res.Reason = -1, engine.MessageOutOfMemory(64<<20)
	}
	return res
}

// finishMeasured ends a run as its node does, with its usage, noting the
// attempt it ends.
func (l *attemptLog) finishMeasured(j *engine.Job, res engine.RunResult) *engine.Job {
	l.t.Helper()
	return l.step(j, engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
}

func wantUsage(t *testing.T, what string, got, want *engine.Usage) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: usage %+v, want %+v", what, deref(got), deref(want))
	}
}

func deref(u *engine.Usage) any {
	if u == nil {
		return nil
	}
	return *u
}

// testUsageTravelsWithTheEnd: the usage of the transition that ends an
// attempt is the job's and the attempt's; a new attempt and a requeue
// clear the job's, the attempts keep theirs, and an attempt ended without
// one (a lost node) records none.
func testUsageTravelsWithTheEnd(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	j := insert(t, s, engine.JobInsertParams{MaxAttempts: 5})
	j = l.start(j, "n1")
	if j.Usage != nil {
		t.Errorf("a job that never ended a run has usage %+v", *j.Usage)
	}
	first := measured(engine.RunFailed, 1.5, 3<<20, false)
	j = l.finishMeasured(j, first)
	wantUsage(t, "a job after a measured failure", j.Usage, first.Usage)
	wantUsage(t, "read back", get(t, s, j.ID).Usage, first.Usage)
	l.check("after a measured failure", j.ID)

	j = l.start(j, "n2")
	wantUsage(t, "a job whose next attempt started", j.Usage, nil)
	j = l.step(j, engine.RecoverUpdate(j, "node n2 lost"))
	wantUsage(t, "a job recovered from a lost node", j.Usage, nil)
	l.check("after a recovery, which measured nothing", j.ID)

	j = l.start(j, "n1")
	j = l.admin(j, engine.VerbPause)
	j = l.admin(j, engine.VerbResume)
	last := measured(engine.RunSucceeded, 0.125, 200<<20, false)
	j = l.finishMeasured(j, last)
	wantUsage(t, "a finished job", j.Usage, last.Usage)
	l.check("after a measured finish", j.ID)

	j = l.admin(j, engine.VerbRequeue)
	wantUsage(t, "a requeued job", j.Usage, nil)
	l.check("after a requeue, which keeps the attempts", j.ID)
	attempts, err := s.JobAttemptList(t.Context(), j.ID)
	if err != nil || len(attempts) != 3 {
		t.Fatalf("JobAttemptList: %d attempts, %v; want 3", len(attempts), err)
	}
	wantUsage(t, "attempt 1", attempts[0].Usage, first.Usage)
	wantUsage(t, "attempt 2 (recovered)", attempts[1].Usage, nil)
	wantUsage(t, "attempt 3", attempts[2].Usage, last.Usage)
}

// testUsageInBatches: the batched ends a node records carry each run's
// usage, or none, job by job, loud and quiet alike.
func testUsageInBatches(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	var jobs []*engine.Job
	for i := range 4 {
		jobs = append(jobs, l.start(insert(t, s, engine.JobInsertParams{Load: float64(i)}), "n1"))
	}
	results := []engine.RunResult{
		measured(engine.RunSucceeded, 2, 10<<20, false),
		{Outcome: engine.RunSucceeded}, // a builtin: not measured
		measured(engine.RunFailed, 0.5, 64<<20, true),
		measured(engine.RunSucceeded, 0, 0, false), // measured as nothing at all
	}
	us := make([]engine.JobUpdate, len(jobs))
	for i, res := range results {
		us[i] = engine.OutcomeUpdate(jobs[i], res, false, func() float64 { return 0.5 })
	}
	from := dbNow(t, s)
	quiet, err := s.JobUpdateManyQuiet(t.Context(), us[:2])
	if err != nil {
		t.Fatalf("JobUpdateManyQuiet: %v", err)
	}
	loud := updateMany(t, s, us[2:])
	for i, r := range append(quiet, loud...) {
		if r.Err != nil {
			t.Fatalf("batched end of job %d: %v", us[i].ID, r.Err)
		}
	}
	for i, r := range loud {
		wantUsage(t, "a loud batch's job", r.Job.Usage, results[2+i].Usage)
	}
	for i, j := range jobs {
		after := get(t, s, j.ID)
		wantUsage(t, "a batched end", after.Usage, results[i].Usage)
		l.expect(j, after, from)
		l.check("after a batch of measured ends", j.ID)
	}
}

// testUsageOOMFilter: JobListParams.OOMKilled keeps the jobs whose last
// ended attempt was killed at its memory limit, in listings and counts.
func testUsageOOMFilter(t *testing.T, s engine.Store) {
	oom := finishRun(t, s, start(t, s, insert(t, s, engine.JobInsertParams{MaxAttempts: 2}), "n1"),
		measured(engine.RunFailed, 0.5, 64<<20, true))
	fine := finishRun(t, s, start(t, s, queued(t, s, 1), "n1"), measured(engine.RunSucceeded, 1, 1<<20, false))
	unmeasured := finish(t, s, start(t, s, queued(t, s, 1), "n1"), engine.RunSucceeded)
	if oom.Status != engine.StatusRestart {
		t.Fatalf("the job killed for memory is %s, want RESTART with an attempt left", oom.Status)
	}
	ids := func(jobs []*engine.Job) []int64 {
		var out []int64
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	if got := ids(list(t, s, engine.JobListParams{OOMKilled: true})); !slices.Equal(got, []int64{oom.ID}) {
		t.Errorf("OOMKilled listing = %v, want [%d] (not %d, %d)", got, oom.ID, fine.ID, unmeasured.ID)
	}
	if got := countByStatus(t, s, engine.JobListParams{OOMKilled: true}); !reflect.DeepEqual(got, map[engine.Status]int{engine.StatusRestart: 1}) {
		t.Errorf("OOMKilled counts = %v, want RESTART: 1", got)
	}
	if got := ids(list(t, s, engine.JobListParams{OOMKilled: true, Statuses: []engine.Status{engine.StatusRestart}})); !slices.Equal(got, []int64{oom.ID}) {
		t.Errorf("OOMKilled listing of RESTART jobs = %v, want [%d]", got, oom.ID)
	}
	// Its next attempt runs: its last ended attempt is the OOM one still,
	// but the job carries no usage while it runs, so it is not listed.
	start(t, s, oom, "n2")
	if got := list(t, s, engine.JobListParams{OOMKilled: true}); len(got) != 0 {
		t.Errorf("OOMKilled listing while the next attempt runs = %v, want none", ids(got))
	}
}

// finishRun ends a run with a result of the test's own.
func finishRun(t *testing.T, s engine.Store, j *engine.Job, res engine.RunResult) *engine.Job {
	t.Helper()
	return apply(t, s, engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
}

// testUsageRefusesWhatCannotBeStored: a usage with a figure that is not a
// finite number, or is negative, is refused alone, and nothing changes.
func testUsageRefusesWhatCannotBeStored(t *testing.T, s engine.Store) {
	for _, bad := range []engine.Usage{
		{CPUSeconds: math.NaN(), WallSeconds: 1}, {CPUSeconds: 1, WallSeconds: math.Inf(1)},
		{CPUSeconds: -1, WallSeconds: 1}, {CPUSeconds: 1, WallSeconds: 1, PeakMemory: -5},
	} {
		j := start(t, s, queued(t, s, 1), "n1")
		u := engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded, Usage: &bad}, false, func() float64 { return 0.5 })
		if _, err := s.JobUpdate(t.Context(), u); !errors.Is(err, engine.ErrInvalidTransition) {
			t.Errorf("JobUpdate with usage %+v: %v, want a refused transition", bad, err)
		}
		good := start(t, s, queued(t, s, 1), "n1")
		res, err := s.JobUpdateMany(t.Context(), []engine.JobUpdate{u,
			engine.OutcomeUpdate(good, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 })})
		if err != nil {
			t.Fatalf("JobUpdateMany: %v", err)
		}
		if !errors.Is(res[0].Err, engine.ErrInvalidTransition) || res[1].Err != nil {
			t.Errorf("JobUpdateMany with usage %+v: %v, %v; want the bad one refused alone", bad, res[0].Err, res[1].Err)
		}
		if after := get(t, s, j.ID); after.Status != engine.StatusRunning || after.Version != j.Version {
			t.Errorf("a refused end changed the job: %s version %d", after.Status, after.Version)
		}
	}
}

// testUsageListPerType: JobAttemptUsageList returns the newest measured
// attempts of each type, at most Runs a type, newest first, with the type
// and load of their job; unmeasured attempts are left out.
func testUsageListPerType(t *testing.T, s engine.Store) {
	var wantA, wantB []engine.AttemptUsage
	for i := range 7 {
		j := start(t, s, insert(t, s, engine.JobInsertParams{Type: "encode", Load: 2}), "n1")
		res := measured(engine.RunSucceeded, float64(i+1), int64(i+1)<<20, false)
		finishRun(t, s, j, res)
		wantA = append(wantA, engine.AttemptUsage{JobID: j.ID, Attempt: 1, Type: "encode", Load: 2, Usage: *res.Usage})
		unmeasured := start(t, s, insert(t, s, engine.JobInsertParams{Type: "encode", Load: 2}), "n1")
		finish(t, s, unmeasured, engine.RunSucceeded)
	}
	retried := start(t, s, insert(t, s, engine.JobInsertParams{Type: "mail", Load: 0.5, MaxAttempts: 2}), "n2")
	res := measured(engine.RunFailed, 0.25, 1<<20, true)
	retried = finishRun(t, s, retried, res)
	wantB = append(wantB, engine.AttemptUsage{JobID: retried.ID, Attempt: 1, Type: "mail", Load: 0.5, Usage: *res.Usage})
	retried = start(t, s, retried, "n1")
	res = measured(engine.RunSucceeded, 0.5, 2<<20, false)
	finishRun(t, s, retried, res)
	wantB = append(wantB, engine.AttemptUsage{JobID: retried.ID, Attempt: 2, Type: "mail", Load: 0.5, Usage: *res.Usage})
	slices.Reverse(wantA)
	slices.Reverse(wantB)

	read := func(p engine.JobAttemptUsageParams) map[string][]engine.AttemptUsage {
		t.Helper()
		got, err := s.JobAttemptUsageList(t.Context(), p)
		if err != nil {
			t.Fatalf("JobAttemptUsageList(%+v): %v", p, err)
		}
		out := map[string][]engine.AttemptUsage{}
		for _, a := range got {
			if a.EndedAt.IsZero() {
				t.Errorf("attempt %d/%d has no end", a.JobID, a.Attempt)
			}
			wantUTC(t, "EndedAt", a.EndedAt)
			out[a.Type] = append(out[a.Type], a)
		}
		return out
	}
	same := func(what string, got, want []engine.AttemptUsage) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d attempts, want %d", what, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			g.EndedAt = w.EndedAt // the order is what says the ends are right
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s[%d] = %+v, want %+v", what, i, g, w)
			}
		}
	}
	all := read(engine.JobAttemptUsageParams{Runs: 5})
	same("encode, newest 5", all["encode"], wantA[:5])
	same("mail", all["mail"], wantB)
	if len(all) != 2 {
		t.Errorf("types listed: %d, want encode and mail", len(all))
	}
	one := read(engine.JobAttemptUsageParams{Runs: 100, Types: []string{"encode"}})
	same("encode alone, all of them", one["encode"], wantA)
	if len(one) != 1 {
		t.Errorf("the types filter let %d types through, want 1", len(one))
	}
	if got := read(engine.JobAttemptUsageParams{Runs: 3, Types: []string{"none"}}); len(got) != 0 {
		t.Errorf("a type without attempts listed %v", got)
	}
	if _, err := s.JobAttemptUsageList(t.Context(), engine.JobAttemptUsageParams{}); err == nil {
		t.Error("JobAttemptUsageList with Runs 0: no error")
	}
}

// testMemoryLimitStored: a job's memory limit is kept, single and in bulk,
// and one out of range is refused.
func testMemoryLimitStored(t *testing.T, s engine.Store) {
	j := insert(t, s, engine.JobInsertParams{MemoryLimit: 64 << 20})
	if j.MemoryLimit != 64<<20 || get(t, s, j.ID).MemoryLimit != 64<<20 {
		t.Errorf("MemoryLimit = %d, read back %d; want %d", j.MemoryLimit, get(t, s, j.ID).MemoryLimit, 64<<20)
	}
	if none := queued(t, s, 1); none.MemoryLimit != 0 {
		t.Errorf("a job without a limit has %d", none.MemoryLimit)
	}
	ids := insertJobsMany(t, s, []engine.JobInsertParams{
		{Type: "noop", Status: engine.StatusQueued, MemoryLimit: 2 << 30},
		{Type: "noop", Status: engine.StatusQueued},
	})
	if a, b := get(t, s, ids[0]), get(t, s, ids[1]); a.MemoryLimit != 2<<30 || b.MemoryLimit != 0 {
		t.Errorf("JobInsertMany kept limits %d and %d, want %d and 0", a.MemoryLimit, b.MemoryLimit, 2<<30)
	}
	for _, bad := range []int64{-1, engine.MinMemoryLimit - 1, engine.MaxMemoryLimit + 1} {
		_, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, MemoryLimit: bad})
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("JobInsert with memory limit %d: %v, want ErrInvalid", bad, err)
		}
	}
}

// testNodeTouchRunningUsage: a touch replaces what the node reported of
// its running jobs; a new registration starts with none.
func testNodeTouchRunningUsage(t *testing.T, s engine.Store) {
	n := sampleNode("alpha")
	register(t, s, n)
	live := []engine.LiveUsage{{JobID: 7, Attempt: 2, CPUSeconds: 12.5, Cores: 1.25, Memory: 300 << 20},
		{JobID: 9, Attempt: 1, CPUSeconds: 0, Cores: 0, Memory: 4096}}
	touch := func(usage []engine.LiveUsage) {
		t.Helper()
		touched, err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: "alpha", LoadAvg: 1, MemAvailable: 1 << 30,
			Cores: 4, RunningUsage: usage, Process: &n.Process})
		if err != nil || touched.State != engine.NodeOnline {
			t.Fatalf("NodeTouch: %+v, %v; want the node ONLINE", touched, err)
		}
	}
	touch(live)
	if got := getNode(t, s, "alpha").RunningUsage; !reflect.DeepEqual(got, live) {
		t.Errorf("RunningUsage = %+v, want %+v", got, live)
	}
	nodes, err := s.NodeList(t.Context())
	if err != nil || len(nodes) != 1 || !reflect.DeepEqual(nodes[0].RunningUsage, live) {
		t.Errorf("NodeList: %v; want the node with its running usage", err)
	}
	touch(nil)
	if got := getNode(t, s, "alpha").RunningUsage; got == nil || len(got) != 0 {
		t.Errorf("RunningUsage after a touch with none = %#v, want []", got)
	}
	touch(live)
	if got := reregister(t, s, n).RunningUsage; got == nil || len(got) != 0 {
		t.Errorf("RunningUsage after a takeover = %#v, want []", got)
	}
}

package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var bulkTests = []subtest{
	{"JobInsertManyFields", testJobInsertManyFields},
	{"JobInsertManyInvalid", testJobInsertManyInvalid},
	{"JobInsertManyUnknownParent", testJobInsertManyUnknownParent},
	{"JobInsertManyChunks", testJobInsertManyChunks},
	{"JobInsertManyLargePayloads", testJobInsertManyLargePayloads},
	{"JobListCreator", testJobListCreator},
	{"JobCountByStatus", testJobCountByStatus},
	{"JobTimes", testJobTimes},
	{"JobPurgeEndedOnly", testJobPurgeEndedOnly},
	{"JobPurgeRemovesWhatChooseSays", testJobPurgeRemovesWhatChooseSays},
	{"JobPurgeFilters", testJobPurgeFilters},
	{"JobPurgeFinishedBefore", testJobPurgeFinishedBefore},
	{"JobPurgeLimit", testJobPurgeLimit},
	{"JobPurgeEndedFirst", testJobPurgeEndedFirst},
	{"JobPurgeIDRange", testJobPurgeIDRange},
	{"JobPurgeAfter", testJobPurgeAfter},
	{"JobListIDRange", testJobListIDRange},
	{"JobPurgeKeepsParents", testJobPurgeKeepsParents},
	{"JobPurgeInBatchesAlwaysMovesOn", testJobPurgeInBatchesAlwaysMovesOn},
	{"JobPurgeInvalid", testJobPurgeInvalid},
	{"JobPurgeDryRun", testJobPurgeDryRun},
	{"JobPurgeKeepsTheRestListed", testJobPurgeKeepsTheRestListed},
	{"NodeRemove", testNodeRemove},
	{"NodeRemoveStale", testNodeRemoveStale},
	{"NodeRemoveHoldingJobs", testNodeRemoveHoldingJobs},
	{"NodeRemoveGuarded", testNodeRemoveGuarded},
}

func insertJobsMany(t *testing.T, s engine.Store, ps []engine.JobInsertParams) []int64 {
	t.Helper()
	ids, err := s.JobInsertMany(t.Context(), ps)
	if err != nil {
		t.Fatalf("JobInsertMany(%d jobs): %v", len(ps), err)
	}
	if len(ids) != len(ps) {
		t.Fatalf("JobInsertMany(%d jobs) returned %d ids", len(ps), len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids do not ascend in input order: %d then %d", ids[i-1], ids[i])
		}
	}
	return ids
}

func countByStatus(t *testing.T, s engine.Store, p engine.JobListParams) map[engine.Status]int {
	t.Helper()
	got, err := s.JobCountByStatus(t.Context(), p)
	if err != nil {
		t.Fatalf("JobCountByStatus(%+v): %v", p, err)
	}
	return got
}

func purge(t *testing.T, s engine.Store, p engine.JobPurgeParams) int {
	t.Helper()
	return purgeBatch(t, s, p).Removed
}

func purgeBatch(t *testing.T, s engine.Store, p engine.JobPurgeParams) engine.JobPurgeResult {
	t.Helper()
	res, err := engine.PurgeJobs(t.Context(), s, p)
	if err != nil {
		t.Fatalf("JobPurge(%+v): %v", p, err)
	}
	return res
}

// wantGone checks which of the jobs still exist.
func wantGone(t *testing.T, s engine.Store, what string, gone []*engine.Job, kept []*engine.Job) {
	t.Helper()
	for _, j := range gone {
		if _, err := s.JobGet(t.Context(), j.ID); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s: job %d (%s) should be gone, JobGet says %v", what, j.ID, j.Status, err)
		}
	}
	for _, j := range kept {
		if _, err := s.JobGet(t.Context(), j.ID); err != nil {
			t.Errorf("%s: job %d (%s) should stay: %v", what, j.ID, j.Status, err)
		}
	}
}

// finished runs a new job to the end with outcome.
func finished(t *testing.T, s engine.Store, p engine.JobInsertParams, outcome engine.RunOutcome) *engine.Job {
	t.Helper()
	return finish(t, s, start(t, s, insert(t, s, p), "n1"), outcome)
}

// sameJob compares a job inserted in bulk with one JobInsert made from the
// same parameters: every field but the id and the times of insertion.
func sameJob(t *testing.T, what string, got, want *engine.Job) {
	t.Helper()
	g, w := *got, *want
	g.ID, w.ID = 0, 0
	g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
	if (g.QueuedAt == nil) != (w.QueuedAt == nil) {
		t.Errorf("%s: QueuedAt %v, JobInsert gives %v", what, g.QueuedAt, w.QueuedAt)
	}
	g.QueuedAt, w.QueuedAt = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s differs from the same job inserted alone:\n got  %+v\n want %+v", what, g, w)
	}
}

func testJobInsertManyFields(t *testing.T, s engine.Store) {
	parent := queued(t, s, 1)
	runAfter := dbNow(t, s).Add(time.Hour).Truncate(time.Millisecond)
	// A job that sets no optional field comes before one that sets them
	// all, and another after it, as a store may send a column the rows
	// mostly leave unset apart from the rest.
	ps := []engine.JobInsertParams{
		{Type: engine.TypeNoop, Status: engine.StatusQueued},
		{
			Type: engine.TypeExec, Operation: "build", Args: []string{"echo", "hello world", "ünïcödé", ""},
			Payload: json.RawMessage(`{"a":[1,2],"b":"x"}`), Load: 2.5, Status: engine.StatusQueued,
			Key: "repo/main", ParentID: &parent.ID, MaxAttempts: 3, Backoff: 1500 * time.Millisecond,
			Rollback: "cleanup", RollbackType: "exec", RunAfter: &runAfter, Timeout: 90 * time.Second,
			Creator: "alice", Priority: 80, MemoryLimit: 64 << 20,
		},
		{Type: "sleep", Status: engine.StatusInstantiated, Payload: json.RawMessage(` "5s" `), Creator: "bob"},
	}
	before := dbNow(t, s)
	ids := insertJobsMany(t, s, ps)
	after := dbNow(t, s)
	if ids[0] <= parent.ID {
		t.Errorf("first id %d is not above the earlier job's %d", ids[0], parent.ID)
	}
	for i, p := range ps {
		got := get(t, s, ids[i])
		if !within(got.CreatedAt, before, after) {
			t.Errorf("job %d: CreatedAt %s not within [%s, %s] of the database clock", i, got.CreatedAt, before, after)
		}
		wantUTC(t, fmt.Sprintf("job %d CreatedAt", i), got.CreatedAt)
		sameJob(t, fmt.Sprintf("job %d", i), got, insert(t, s, p))
	}
	if got := insertJobsMany(t, s, nil); len(got) != 0 {
		t.Errorf("inserting no jobs gave ids %v", got)
	}
}

func testJobInsertManyInvalid(t *testing.T, s engine.Store) {
	ps := []engine.JobInsertParams{
		{Type: "noop", Status: engine.StatusQueued},
		{Type: "noop", Status: engine.StatusQueued},
		{Type: "noop", Status: engine.StatusQueued, Load: -1},
		{Type: "noop", Status: engine.StatusQueued},
	}
	_, err := s.JobInsertMany(t.Context(), ps)
	var inv *engine.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("an invalid job among many: got %v, want an *engine.InvalidError", err)
	}
	if !strings.Contains(err.Error(), "index 2") || !strings.Contains(err.Error(), "load") {
		t.Errorf("error %q should name index 2 and the load", err)
	}
	if got := countByStatus(t, s, engine.JobListParams{}); len(got) != 0 {
		t.Errorf("nothing should be inserted, found %v", got)
	}
}

func testJobInsertManyUnknownParent(t *testing.T, s engine.Store) {
	parent := queued(t, s, 1)
	missing := parent.ID + 1000
	ps := []engine.JobInsertParams{
		{Type: "noop", Status: engine.StatusQueued, ParentID: &parent.ID},
		{Type: "noop", Status: engine.StatusQueued, ParentID: &missing},
	}
	_, err := s.JobInsertMany(t.Context(), ps)
	wantErrIs(t, "a parent that does not exist", err, engine.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), fmt.Sprint(missing)) {
		t.Errorf("error %q should name job %d", err, missing)
	}
	wantIDs(t, "after the refused batch", list(t, s, engine.JobListParams{}), parent)
}

// 2500 jobs cross every chunk size a store may use for its statements.
func testJobInsertManyChunks(t *testing.T, s engine.Store) {
	const n = 2500
	ps := make([]engine.JobInsertParams, n)
	for i := range ps {
		ps[i] = engine.JobInsertParams{
			Type: "noop", Status: engine.StatusQueued, Operation: fmt.Sprintf("op-%d", i),
			Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), Creator: "bulk",
		}
	}
	ids := insertJobsMany(t, s, ps)
	jobs := list(t, s, engine.JobListParams{Creator: "bulk"})
	if len(jobs) != n {
		t.Fatalf("listed %d jobs, want %d", len(jobs), n)
	}
	for i, j := range jobs {
		if j.ID != ids[i] || j.Operation != fmt.Sprintf("op-%d", i) || string(j.Payload) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("job %d: id %d operation %q payload %s; want id %d, op-%d", i, j.ID, j.Operation, j.Payload, ids[i], i)
		}
	}
	if got := countByStatus(t, s, engine.JobListParams{}); !maps.Equal(got, map[engine.Status]int{engine.StatusQueued: n}) {
		t.Errorf("counts %v, want %d QUEUED", got, n)
	}
}

// Payloads at their limit fill a statement long before its row count does.
func testJobInsertManyLargePayloads(t *testing.T, s engine.Store) {
	ps := make([]engine.JobInsertParams, 9)
	for i := range ps {
		ps[i] = engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, Payload: payloadOfSize(engine.MaxPayloadBytes)}
	}
	ids := insertJobsMany(t, s, ps)
	for _, id := range ids {
		if got := get(t, s, id); len(got.Payload) != engine.MaxPayloadBytes {
			t.Errorf("job %d: payload of %d bytes, want %d", id, len(got.Payload), engine.MaxPayloadBytes)
		}
	}
}

func testJobListCreator(t *testing.T, s engine.Store) {
	a1 := insert(t, s, engine.JobInsertParams{Creator: "alice"})
	insert(t, s, engine.JobInsertParams{Creator: "bob"})
	a2 := insert(t, s, engine.JobInsertParams{Creator: "alice", Type: "sleep"})
	insert(t, s, engine.JobInsertParams{})
	wantIDs(t, "creator alice", list(t, s, engine.JobListParams{Creator: "alice"}), a1, a2)
	wantIDs(t, "creator alice, type sleep", list(t, s, engine.JobListParams{Creator: "alice", Types: []string{"sleep"}}), a2)
	wantIDs(t, "creator alice, limit 1", list(t, s, engine.JobListParams{Creator: "alice", Limit: 1}), a2)
	wantIDs(t, "unknown creator", list(t, s, engine.JobListParams{Creator: "carol"}))
}

func testJobCountByStatus(t *testing.T, s engine.Store) {
	root := insert(t, s, engine.JobInsertParams{Creator: "alice", Key: "k"})
	insert(t, s, engine.JobInsertParams{Creator: "alice", Key: "k", Status: engine.StatusInstantiated})
	insert(t, s, engine.JobInsertParams{Creator: "bob", Type: "sleep", ParentID: &root.ID})
	start(t, s, insert(t, s, engine.JobInsertParams{Creator: "bob", ParentID: &root.ID}), "n1")
	finished(t, s, engine.JobInsertParams{Creator: "alice", Type: "sleep"}, engine.RunSucceeded)
	finished(t, s, engine.JobInsertParams{Creator: "alice"}, engine.RunFailed)
	finished(t, s, engine.JobInsertParams{Creator: "bob"}, engine.RunFailed)

	for _, tt := range []struct {
		what string
		p    engine.JobListParams
		want map[engine.Status]int
	}{
		{"every job", engine.JobListParams{}, map[engine.Status]int{
			engine.StatusQueued: 2, engine.StatusInstantiated: 1, engine.StatusRunning: 1,
			engine.StatusFinished: 1, engine.StatusFailed: 2}},
		{"limit ignored", engine.JobListParams{Limit: 1}, map[engine.Status]int{
			engine.StatusQueued: 2, engine.StatusInstantiated: 1, engine.StatusRunning: 1,
			engine.StatusFinished: 1, engine.StatusFailed: 2}},
		{"creator alice", engine.JobListParams{Creator: "alice"}, map[engine.Status]int{
			engine.StatusQueued: 1, engine.StatusInstantiated: 1, engine.StatusFinished: 1, engine.StatusFailed: 1}},
		{"type sleep", engine.JobListParams{Types: []string{"sleep"}}, map[engine.Status]int{
			engine.StatusQueued: 1, engine.StatusFinished: 1}},
		{"FAILED or QUEUED of bob", engine.JobListParams{Creator: "bob", Statuses: []engine.Status{engine.StatusFailed, engine.StatusQueued}},
			map[engine.Status]int{engine.StatusQueued: 1, engine.StatusFailed: 1}},
		{"key k", engine.JobListParams{Key: "k"}, map[engine.Status]int{engine.StatusQueued: 1, engine.StatusInstantiated: 1}},
		{"children of the root", engine.JobListParams{ParentID: &root.ID}, map[engine.Status]int{
			engine.StatusQueued: 1, engine.StatusRunning: 1}},
		{"node n1, FINISHED", engine.JobListParams{Node: "n1", Statuses: []engine.Status{engine.StatusFinished}},
			map[engine.Status]int{engine.StatusFinished: 1}},
		{"nobody's", engine.JobListParams{Creator: "carol"}, map[engine.Status]int{}},
	} {
		if got := countByStatus(t, s, tt.p); !maps.Equal(got, tt.want) {
			t.Errorf("%s: counts %v, want %v", tt.what, got, tt.want)
		}
	}
}

// JobTimes gives the status and times JobList gives, of the jobs JobList
// would list with the same filters, whatever its limit.
func testJobTimes(t *testing.T, s engine.Store) {
	first := insert(t, s, engine.JobInsertParams{Creator: "alice"})
	start(t, s, insert(t, s, engine.JobInsertParams{Creator: "alice"}), "n1")
	finished(t, s, engine.JobInsertParams{Creator: "alice"}, engine.RunSucceeded)
	finished(t, s, engine.JobInsertParams{Creator: "alice"}, engine.RunFailed)
	finished(t, s, engine.JobInsertParams{Creator: "bob"}, engine.RunSucceeded)
	key := func(j engine.JobTimes) string {
		at := func(when *time.Time) string {
			if when == nil {
				return "-"
			}
			return when.UTC().Format(time.RFC3339Nano)
		}
		return fmt.Sprintf("%s %s %s %s", j.Status, at(&j.CreatedAt), at(j.StartedAt), at(j.FinishedAt))
	}
	for _, tt := range []struct {
		p    engine.JobListParams
		want int
	}{
		{engine.JobListParams{Creator: "alice"}, 4},
		{engine.JobListParams{Creator: "alice", Limit: 1}, 4},
		{engine.JobListParams{Creator: "alice", MinID: first.ID + 1, MaxID: first.ID + 2}, 2},
		{engine.JobListParams{Statuses: []engine.Status{engine.StatusFinished}}, 2},
		{engine.JobListParams{Creator: "carol"}, 0},
	} {
		p := tt.p
		listed, err := s.JobList(t.Context(), engine.JobListParams{Creator: p.Creator, Statuses: p.Statuses,
			MinID: p.MinID, MaxID: p.MaxID})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, j := range listed {
			want = append(want, key(engine.JobTimes{Status: j.Status, CreatedAt: j.CreatedAt,
				StartedAt: j.StartedAt, FinishedAt: j.FinishedAt}))
		}
		times, err := s.JobTimes(t.Context(), p)
		if err != nil {
			t.Fatalf("JobTimes(%+v): %v", p, err)
		}
		var got []string
		for _, j := range times {
			got = append(got, key(j))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) || len(got) != tt.want {
			t.Errorf("JobTimes(%+v):\n%s\nwant\n%s", p, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// Only ended jobs go, with their logs and reservations; every other job
// and its log stays.
func testJobPurgeEndedOnly(t *testing.T, s engine.Store) {
	ctx := t.Context()
	queuedJob := queued(t, s, 1)
	held := insert(t, s, engine.JobInsertParams{Status: engine.StatusInstantiated})
	running := start(t, s, queued(t, s, 1), "n1")
	done := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	failed := finished(t, s, engine.JobInsertParams{}, engine.RunFailed)
	warned := finished(t, s, engine.JobInsertParams{}, engine.RunSucceededWithWarning)
	cancelled := admin(t, s, queued(t, s, 1), engine.VerbCancel)
	deleted := admin(t, s, finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded), engine.VerbDelete)
	for _, j := range []*engine.Job{running, done} {
		if err := s.JobLogAppend(ctx, engine.JobLogAppendParams{JobID: j.ID, Attempt: 1, Data: []byte("output\n")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ReservationSet(ctx, engine.Reservation{JobID: done.ID, Node: "big"}); err != nil {
		t.Fatal(err)
	}

	if n := purge(t, s, engine.JobPurgeParams{}); n != 5 {
		t.Errorf("purged %d jobs, want the 5 that ended", n)
	}
	wantGone(t, s, "purge of every ended job", []*engine.Job{done, failed, warned, cancelled, deleted},
		[]*engine.Job{queuedJob, held, running})
	logs, err := s.JobLogList(ctx, engine.JobLogListParams{JobID: done.ID})
	if err != nil || len(logs) != 0 {
		t.Errorf("log of the purged job: %v, %v; want none", logs, err)
	}
	logs, err = s.JobLogList(ctx, engine.JobLogListParams{JobID: running.ID})
	if err != nil || len(logs) != 1 {
		t.Errorf("log of the running job: %v, %v; want its one chunk", logs, err)
	}
	if rs, err := s.ReservationList(ctx); err != nil || len(rs) != 0 {
		t.Errorf("reservations after the purge: %v, %v; want none", rs, err)
	}
	if n := purge(t, s, engine.JobPurgeParams{}); n != 0 {
		t.Errorf("a second purge removed %d jobs, want 0", n)
	}
}

// The jobs a purge leaves are listed by every filter as before, whether
// it takes out most of the jobs or few of them.
func testJobPurgeKeepsTheRestListed(t *testing.T, s engine.Store) {
	running := start(t, s, queued(t, s, 1), "n1")
	sleeping := start(t, s, insert(t, s, engine.JobInsertParams{Type: engine.TypeSleep}), "n2")
	waiting := queued(t, s, 1)
	for range 5 {
		finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	}
	wantListed := func(what string, waiting ...*engine.Job) {
		t.Helper()
		all := append([]*engine.Job{running, sleeping}, waiting...)
		wantIDs(t, what+", all", list(t, s, engine.JobListParams{}), all...)
		wantIDs(t, what+", on n1", list(t, s, engine.JobListParams{Node: "n1"}), running)
		wantIDs(t, what+", RUNNING", list(t, s, engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}}), running, sleeping)
		wantIDs(t, what+", FINISHED", list(t, s, engine.JobListParams{Statuses: []engine.Status{engine.StatusFinished}}))
		wantIDs(t, what+", QUEUED", list(t, s, engine.JobListParams{Statuses: []engine.Status{engine.StatusQueued}}), waiting...)
		wantIDs(t, what+", sleep", list(t, s, engine.JobListParams{Types: []string{engine.TypeSleep}}), sleeping)
		wantIDs(t, what+", noop", list(t, s, engine.JobListParams{Types: []string{engine.TypeNoop}}), append([]*engine.Job{running}, waiting...)...)
	}
	if n := purge(t, s, engine.JobPurgeParams{}); n != 5 {
		t.Errorf("purge of most jobs removed %d, want 5", n)
	}
	wantListed("after a purge of most jobs", waiting)
	more := []*engine.Job{waiting}
	for range 4 {
		more = append(more, queued(t, s, 1))
	}
	finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	if n := purge(t, s, engine.JobPurgeParams{}); n != 1 {
		t.Errorf("purge of few jobs removed %d, want 1", n)
	}
	wantListed("after a purge of few jobs", more...)
}

func testJobPurgeFilters(t *testing.T, s engine.Store) {
	aliceDone := finished(t, s, engine.JobInsertParams{Creator: "alice"}, engine.RunSucceeded)
	aliceFailed := finished(t, s, engine.JobInsertParams{Creator: "alice"}, engine.RunFailed)
	aliceQueued := insert(t, s, engine.JobInsertParams{Creator: "alice"})
	bobFailed := finished(t, s, engine.JobInsertParams{Creator: "bob"}, engine.RunFailed)
	bobCancelled := admin(t, s, insert(t, s, engine.JobInsertParams{Creator: "bob"}), engine.VerbCancel)

	if n := purge(t, s, engine.JobPurgeParams{Creator: "alice"}); n != 2 {
		t.Errorf("purge of alice's jobs removed %d, want 2", n)
	}
	wantGone(t, s, "alice's", []*engine.Job{aliceDone, aliceFailed}, []*engine.Job{aliceQueued, bobFailed, bobCancelled})
	if n := purge(t, s, engine.JobPurgeParams{Statuses: []engine.Status{engine.StatusFailed}}); n != 1 {
		t.Errorf("purge of FAILED jobs removed %d, want 1", n)
	}
	wantGone(t, s, "FAILED", []*engine.Job{bobFailed}, []*engine.Job{aliceQueued, bobCancelled})
	if n := purge(t, s, engine.JobPurgeParams{Creator: "alice", Statuses: []engine.Status{engine.StatusCancelled}}); n != 0 {
		t.Errorf("purge of alice's CANCELLED jobs removed %d, want 0", n)
	}
	wantGone(t, s, "nothing of alice's CANCELLED", nil, []*engine.Job{aliceQueued, bobCancelled})
}

func testJobPurgeFinishedBefore(t *testing.T, s engine.Store) {
	early := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	waitDBClockPast(t, s, *early.FinishedAt)
	late := finished(t, s, engine.JobInsertParams{}, engine.RunFailed)
	if !late.FinishedAt.After(*early.FinishedAt) {
		t.Fatalf("finish times %s, %s do not ascend", early.FinishedAt, late.FinishedAt)
	}
	cut := *late.FinishedAt
	if n := purge(t, s, engine.JobPurgeParams{FinishedBefore: &cut}); n != 1 {
		t.Errorf("purge of jobs ended before %s removed %d, want 1", cut, n)
	}
	wantGone(t, s, "ended before the later one", []*engine.Job{early}, []*engine.Job{late})
	cut = cut.Add(time.Millisecond)
	if n := purge(t, s, engine.JobPurgeParams{FinishedBefore: &cut}); n != 1 {
		t.Errorf("purge of jobs ended before %s removed %d, want 1", cut, n)
	}
	wantGone(t, s, "ended before a moment later", []*engine.Job{late}, nil)
}

func testJobPurgeLimit(t *testing.T, s engine.Store) {
	var jobs []*engine.Job
	for range 5 {
		jobs = append(jobs, finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded))
	}
	if n := purge(t, s, engine.JobPurgeParams{Limit: 2}); n != 2 {
		t.Errorf("purge with limit 2 removed %d", n)
	}
	wantGone(t, s, "limit 2", jobs[:2], jobs[2:])
	if n := purge(t, s, engine.JobPurgeParams{Limit: 10}); n != 3 {
		t.Errorf("purge with limit 10 removed %d, want the 3 left", n)
	}
	wantGone(t, s, "limit 10", jobs, nil)
}

// With a limit, the jobs that ended first go first, whatever their ids.
func testJobPurgeEndedFirst(t *testing.T, s engine.Store) {
	older := start(t, s, queued(t, s, 1), "n1")
	newer := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	waitDBClockPast(t, s, *newer.FinishedAt)
	older = finish(t, s, older, engine.RunSucceeded)
	if n := purge(t, s, engine.JobPurgeParams{Limit: 1}); n != 1 {
		t.Errorf("purge with limit 1 removed %d", n)
	}
	wantGone(t, s, "limit 1", []*engine.Job{newer}, []*engine.Job{older})
	cut := *older.FinishedAt
	if n := purge(t, s, engine.JobPurgeParams{Limit: 1, FinishedBefore: &cut}); n != 0 {
		t.Errorf("purge with limit 1 of jobs ended before %s removed %d, want 0", cut, n)
	}
	if n := purge(t, s, engine.JobPurgeParams{Limit: 1}); n != 1 {
		t.Errorf("second purge with limit 1 removed %d", n)
	}
	wantGone(t, s, "second limit 1", []*engine.Job{older}, nil)
}

// A purge in batches goes on where the batch before stopped: each result
// names the last job it weighed, and a batch after it weighs only later
// ones, even where an earlier job could now go.
func testJobPurgeAfter(t *testing.T, s engine.Store) {
	parent := start(t, s, queued(t, s, 1), "n1")
	child := start(t, s, insert(t, s, engine.JobInsertParams{ParentID: &parent.ID}), "n1")
	parent = finish(t, s, parent, engine.RunSucceeded)
	waitDBClockPast(t, s, *parent.FinishedAt)
	var jobs []*engine.Job
	for range 4 {
		jobs = append(jobs, finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded))
		waitDBClockPast(t, s, *jobs[len(jobs)-1].FinishedAt)
	}
	// The parent, first to end, stays while its child runs.
	res := purgeBatch(t, s, engine.JobPurgeParams{Limit: 2})
	if res.Removed != 1 || res.Next == nil || res.Next.ID != jobs[0].ID || !res.Next.EndedAt.Equal(*jobs[0].FinishedAt) {
		t.Fatalf("first batch of 2: %+v, want 1 removed and the next after job %d", res, jobs[0].ID)
	}
	wantGone(t, s, "first batch", jobs[:1], []*engine.Job{parent})
	child = finish(t, s, child, engine.RunSucceeded)
	res = purgeBatch(t, s, engine.JobPurgeParams{Limit: 2, After: res.Next})
	if res.Removed != 2 || res.Next == nil || res.Next.ID != jobs[2].ID {
		t.Fatalf("second batch of 2: %+v, want 2 removed and the next after job %d", res, jobs[2].ID)
	}
	wantGone(t, s, "second batch", jobs[1:3], []*engine.Job{parent, jobs[3], child})
	if n := purgeBatch(t, s, engine.JobPurgeParams{After: res.Next, DryRun: true}).Removed; n != 2 {
		t.Errorf("dry run after job %d counts %d, want 2 (the last job and the child)", jobs[2].ID, n)
	}
	res = purgeBatch(t, s, engine.JobPurgeParams{Limit: 2, After: res.Next})
	if res.Removed != 2 {
		t.Fatalf("third batch of 2: %+v, want the last job and the child removed", res)
	}
	wantGone(t, s, "third batch", []*engine.Job{jobs[3], child}, []*engine.Job{parent})
	if res = purgeBatch(t, s, engine.JobPurgeParams{Limit: 2, After: res.Next}); res.Removed != 0 || res.Next != nil {
		t.Errorf("a batch past the last: %+v, want nothing removed and no next", res)
	}
	if n := purge(t, s, engine.JobPurgeParams{Limit: 2}); n != 1 {
		t.Errorf("a batch from the start removed %d, want the parent", n)
	}
}

// A range of ids bounds a purge, with or without the other filters.
func testJobPurgeIDRange(t *testing.T, s engine.Store) {
	var jobs []*engine.Job
	for range 5 {
		jobs = append(jobs, finished(t, s, engine.JobInsertParams{Creator: "bench"}, engine.RunSucceeded))
		waitDBClockPast(t, s, *jobs[len(jobs)-1].FinishedAt)
	}
	running := start(t, s, insert(t, s, engine.JobInsertParams{Creator: "bench"}), "n1")
	if n := purge(t, s, engine.JobPurgeParams{MinID: jobs[1].ID, MaxID: jobs[2].ID, DryRun: true}); n != 2 {
		t.Errorf("dry run over ids %d to %d counts %d, want 2", jobs[1].ID, jobs[2].ID, n)
	}
	if n := purge(t, s, engine.JobPurgeParams{Creator: "bench", MinID: jobs[1].ID, MaxID: jobs[2].ID}); n != 2 {
		t.Errorf("purge of ids %d to %d removed %d, want 2", jobs[1].ID, jobs[2].ID, n)
	}
	wantGone(t, s, "ids 2 to 3", jobs[1:3], []*engine.Job{jobs[0], jobs[3], jobs[4], running})
	cut := *jobs[4].FinishedAt
	if n := purge(t, s, engine.JobPurgeParams{MinID: jobs[3].ID, FinishedBefore: &cut}); n != 1 {
		t.Errorf("purge from id %d of jobs ended before the last removed %d, want 1", jobs[3].ID, n)
	}
	wantGone(t, s, "from id 4, ended before the last", jobs[3:4], []*engine.Job{jobs[0], jobs[4], running})
	if n := purge(t, s, engine.JobPurgeParams{MaxID: jobs[0].ID, Limit: 5}); n != 1 {
		t.Errorf("purge up to id %d removed %d, want 1", jobs[0].ID, n)
	}
	if n := purge(t, s, engine.JobPurgeParams{MinID: jobs[0].ID, MaxID: running.ID}); n != 1 {
		t.Errorf("purge of the rest removed %d, want the 1 ended", n)
	}
	wantGone(t, s, "the rest", jobs, []*engine.Job{running})
	_, err := engine.PurgeJobs(t.Context(), s, engine.JobPurgeParams{MinID: -1})
	wantErrIs(t, "a negative id bound", err, engine.ErrInvalid)
	_, err = engine.PurgeJobs(t.Context(), s, engine.JobPurgeParams{MaxID: 5, After: &engine.PurgePosition{ID: 1}})
	wantErrIs(t, "a range with a place to continue after", err, engine.ErrInvalid)
}

// A range of ids bounds a listing and a count, both ends included.
func testJobListIDRange(t *testing.T, s engine.Store) {
	var jobs []*engine.Job
	for range 4 {
		jobs = append(jobs, insert(t, s, engine.JobInsertParams{Creator: "bench"}))
	}
	jobs[3] = finish(t, s, start(t, s, jobs[3], "n1"), engine.RunSucceeded)
	ids := func(js []*engine.Job) []int64 {
		out := make([]int64, len(js))
		for i, j := range js {
			out[i] = j.ID
		}
		return out
	}
	for _, tt := range []struct {
		what string
		p    engine.JobListParams
		want []*engine.Job
	}{
		{"ids 2 to 3", engine.JobListParams{MinID: jobs[1].ID, MaxID: jobs[2].ID}, jobs[1:3]},
		{"from id 3", engine.JobListParams{MinID: jobs[2].ID}, jobs[2:]},
		{"up to id 2, brief", engine.JobListParams{MaxID: jobs[1].ID, Brief: true}, jobs[:2]},
		{"queued from id 2", engine.JobListParams{MinID: jobs[1].ID, Statuses: []engine.Status{engine.StatusQueued}}, jobs[1:3]},
		{"ids 2 to 4, newest 1", engine.JobListParams{MinID: jobs[1].ID, MaxID: jobs[3].ID, Limit: 1}, jobs[3:]},
	} {
		got, err := s.JobList(t.Context(), tt.p)
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		if !reflect.DeepEqual(ids(got), ids(tt.want)) {
			t.Errorf("%s: listed %v, want %v", tt.what, ids(got), ids(tt.want))
		}
	}
	counts := countByStatus(t, s, engine.JobListParams{Creator: "bench", MinID: jobs[2].ID, MaxID: jobs[3].ID})
	if want := map[engine.Status]int{engine.StatusQueued: 1, engine.StatusFinished: 1}; !maps.Equal(counts, want) {
		t.Errorf("counts of ids 3 to 4: %v, want %v", counts, want)
	}
	counts = countByStatus(t, s, engine.JobListParams{MinID: jobs[1].ID, Statuses: []engine.Status{engine.StatusQueued}})
	if want := map[engine.Status]int{engine.StatusQueued: 2}; !maps.Equal(counts, want) {
		t.Errorf("queued from id 2: %v, want %v", counts, want)
	}
}

// A purge with a limit looks at the oldest candidates first; when those
// are all parents whose children came later, it still removes something,
// so a purge in batches never stalls.
func testJobPurgeInBatchesAlwaysMovesOn(t *testing.T, s engine.Store) {
	var all []*engine.Job
	var parents []*engine.Job
	for range 3 {
		parents = append(parents, start(t, s, queued(t, s, 1), "n1"))
	}
	for _, p := range parents {
		all = append(all, finished(t, s, engine.JobInsertParams{ParentID: &p.ID}, engine.RunSucceeded))
	}
	for _, p := range parents {
		all = append(all, finish(t, s, p, engine.RunSucceeded))
	}
	removed := 0
	for calls := 0; removed < len(all); calls++ {
		n := purge(t, s, engine.JobPurgeParams{Limit: 2})
		if n == 0 {
			t.Fatalf("a purge with limit 2 removed nothing with %d ended jobs left", len(all)-removed)
		}
		removed += n
	}
	wantGone(t, s, "in batches", all, nil)
}

// A job whose child stays stays too: no job is left naming a parent that
// is gone. With a limit, a parent goes only with all its descendants.
func testJobPurgeKeepsParents(t *testing.T, s engine.Store) {
	parent := start(t, s, queued(t, s, 1), "n1")
	child := insert(t, s, engine.JobInsertParams{ParentID: &parent.ID})
	parent = finish(t, s, parent, engine.RunSucceeded)
	if n := purge(t, s, engine.JobPurgeParams{}); n != 0 {
		t.Errorf("purge removed %d jobs, want none: the ended parent has a queued child", n)
	}
	wantGone(t, s, "parent of a queued child", nil, []*engine.Job{parent, child})

	// The child ends, but only the parent matches the filter.
	child = finish(t, s, start(t, s, child, "n1"), engine.RunFailed)
	if n := purge(t, s, engine.JobPurgeParams{Statuses: []engine.Status{engine.StatusFinished}}); n != 0 {
		t.Errorf("purge of FINISHED removed %d jobs, want none: the FAILED child stays", n)
	}
	wantGone(t, s, "parent of a child that does not match", nil, []*engine.Job{parent, child})

	// A grandchild: the family of three does not fit in a limit of 2, so
	// the child and grandchild go first, and the parent after them.
	grandchild := finished(t, s, engine.JobInsertParams{ParentID: &child.ID}, engine.RunSucceeded)
	if n := purge(t, s, engine.JobPurgeParams{Limit: 2}); n != 2 {
		t.Errorf("purge with limit 2 removed %d jobs, want child and grandchild", n)
	}
	wantGone(t, s, "limit 2", []*engine.Job{child, grandchild}, []*engine.Job{parent})
	if n := purge(t, s, engine.JobPurgeParams{Limit: 2}); n != 1 {
		t.Errorf("second purge with limit 2 removed %d jobs, want the parent", n)
	}
	wantGone(t, s, "second limit 2", []*engine.Job{parent}, nil)

	// Without a limit a whole ended family goes at once.
	root := start(t, s, queued(t, s, 1), "n1")
	kids := []*engine.Job{
		finished(t, s, engine.JobInsertParams{ParentID: &root.ID}, engine.RunSucceeded),
		finished(t, s, engine.JobInsertParams{ParentID: &root.ID}, engine.RunFailed),
	}
	root = finish(t, s, root, engine.RunSucceeded)
	if n := purge(t, s, engine.JobPurgeParams{}); n != 3 {
		t.Errorf("purge of an ended family removed %d jobs, want 3", n)
	}
	wantGone(t, s, "ended family", append(kids, root), nil)
}

// A dry run counts what a purge would remove, by the same rules, and
// removes nothing.
func testJobPurgeDryRun(t *testing.T, s engine.Store) {
	parent := start(t, s, queued(t, s, 1), "n1")
	child := insert(t, s, engine.JobInsertParams{ParentID: &parent.ID})
	parent = finish(t, s, parent, engine.RunSucceeded)
	done := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	failed := finished(t, s, engine.JobInsertParams{}, engine.RunFailed)
	if err := s.JobLogAppend(t.Context(), engine.JobLogAppendParams{JobID: done.ID, Attempt: 1, Data: []byte("output\n")}); err != nil {
		t.Fatal(err)
	}
	all := []*engine.Job{parent, child, done, failed}
	if n := purge(t, s, engine.JobPurgeParams{DryRun: true}); n != 2 {
		t.Errorf("dry run counts %d jobs, want 2: the parent of a queued child stays", n)
	}
	if n := purge(t, s, engine.JobPurgeParams{DryRun: true, Statuses: []engine.Status{engine.StatusFailed}}); n != 1 {
		t.Errorf("dry run of FAILED counts %d jobs, want 1", n)
	}
	if n := purge(t, s, engine.JobPurgeParams{DryRun: true, Limit: 1}); n != 1 {
		t.Errorf("dry run with limit 1 counts %d jobs, want 1", n)
	}
	wantGone(t, s, "after dry runs", nil, all)
	if logs, err := s.JobLogList(t.Context(), engine.JobLogListParams{JobID: done.ID}); err != nil || len(logs) != 1 {
		t.Errorf("log after dry runs: %v, %v; want its one chunk", logs, err)
	}
	if n := purge(t, s, engine.JobPurgeParams{}); n != 2 {
		t.Errorf("purge after dry runs removed %d jobs, want the 2 counted", n)
	}
}

func testJobPurgeInvalid(t *testing.T, s engine.Store) {
	done := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	for what, p := range map[string]engine.JobPurgeParams{
		"a status that has not ended": {Statuses: []engine.Status{engine.StatusFinished, engine.StatusQueued}},
		"a negative limit":            {Limit: -1},
	} {
		_, err := engine.PurgeJobs(t.Context(), s, p)
		wantErrIs(t, what, err, engine.ErrInvalid)
	}
	_, err := s.JobPurge(t.Context(), engine.JobPurgeParams{})
	wantErrIs(t, "a purge with no rule to choose", err, engine.ErrInvalid)
	wantGone(t, s, "after refused purges", nil, []*engine.Job{done})
}

// removeNode removes a node through engine.RemoveNode, which judges
// whether it may go and removes it through the store's guarded NodeRemove.
func removeNode(t *testing.T, s engine.Store, name string, staleAfter time.Duration) error {
	t.Helper()
	_, err := engine.RemoveNode(t.Context(), s, engine.RemoveNodeParams{Name: name, StaleAfter: staleAfter,
		Event: engine.EventAppendParams{Verb: engine.EventNodesRm}}, engine.Actor{Who: "op@host"})
	return err
}

// The store removes what Choose picks of the candidates it hands it, and
// hands it the candidates with a child that is no candidate as pinned:
// which jobs may go is the engine's to judge.
func testJobPurgeRemovesWhatChooseSays(t *testing.T, s engine.Store) {
	parent := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	child := finished(t, s, engine.JobInsertParams{ParentID: &parent.ID}, engine.RunSucceeded)
	running := start(t, s, insert(t, s, engine.JobInsertParams{ParentID: &child.ID}), "n1")
	other := finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
	var seen []engine.PurgeCandidate
	var seenPinned []int64
	pick := func(ids ...int64) func([]engine.PurgeCandidate, []int64, int) []int64 {
		return func(candidates []engine.PurgeCandidate, pinned []int64, _ int) []int64 {
			seen, seenPinned = candidates, pinned
			return ids
		}
	}
	res, err := s.JobPurge(t.Context(), engine.JobPurgeParams{Choose: pick()})
	if err != nil || res.Removed != 0 {
		t.Fatalf("a purge that picks nothing: %+v, %v; want nothing removed", res, err)
	}
	if len(seen) != 3 {
		t.Errorf("candidates handed to Choose: %v; want the 3 ended jobs", seen)
	}
	if !slices.Equal(seenPinned, []int64{child.ID}) {
		t.Errorf("pinned handed to Choose: %v; want job %d, whose child runs", seenPinned, child.ID)
	}
	res, err = s.JobPurge(t.Context(), engine.JobPurgeParams{Choose: pick(other.ID)})
	if err != nil || res.Removed != 1 {
		t.Fatalf("a purge that picks one job: %+v, %v; want it removed", res, err)
	}
	wantGone(t, s, "after a purge that picks one job", []*engine.Job{other}, []*engine.Job{parent, child, running})
}

func testNodeRemove(t *testing.T, s engine.Store) {
	ctx := t.Context()
	register(t, s, sampleNode("alpha"))
	err := removeNode(t, s, "alpha", time.Hour)
	wantErrIs(t, "removing a live node", err, engine.ErrNodeOnline)
	getNode(t, s, "alpha")

	job := queued(t, s, 1)
	if err := s.ReservationSet(ctx, engine.Reservation{JobID: job.ID, Node: "alpha"}); err != nil {
		t.Fatal(err)
	}
	if err := s.NodeSetState(ctx, "alpha", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	if err := removeNode(t, s, "alpha", time.Hour); err != nil {
		t.Fatalf("removing an OFFLINE node: %v", err)
	}
	_, err = s.NodeGet(ctx, "alpha")
	wantErrIs(t, "the removed node", err, engine.ErrNotFound)
	if rs, err := s.ReservationList(ctx); err != nil || len(rs) != 0 {
		t.Errorf("reservations after removing their node: %v, %v; want none", rs, err)
	}
	get(t, s, job.ID)

	err = removeNode(t, s, "alpha", time.Hour)
	var nf *engine.NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("removing an unknown node: got %v, want a *engine.NotFoundError", err)
	}
}

func testNodeRemoveStale(t *testing.T, s engine.Store) {
	const staleAfter = 300 * time.Millisecond
	n := register(t, s, sampleNode("alpha"))
	err := removeNode(t, s, "alpha", time.Hour)
	wantErrIs(t, "removing a node seen within StaleAfter", err, engine.ErrNodeOnline)
	waitDBClockPast(t, s, n.LastSeen.Add(staleAfter))
	if err := removeNode(t, s, "alpha", staleAfter); err != nil {
		t.Fatalf("removing an ONLINE node not seen for StaleAfter: %v", err)
	}
	_, err = s.NodeGet(t.Context(), "alpha")
	wantErrIs(t, "the removed node", err, engine.ErrNotFound)
}

// A gone node whose jobs the dispatcher has not recovered yet stays: they
// are recovered through its row.
func testNodeRemoveHoldingJobs(t *testing.T, s engine.Store) {
	ctx := t.Context()
	register(t, s, sampleNode("alpha"))
	running := start(t, s, queued(t, s, 1), "alpha")
	if err := s.NodeSetState(ctx, "alpha", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	err := removeNode(t, s, "alpha", time.Hour)
	wantErrIs(t, "removing a node that holds a running job", err, engine.ErrConflict)
	getNode(t, s, "alpha")

	apply(t, s, engine.RecoverUpdate(running, "node alpha went offline"))
	if err := removeNode(t, s, "alpha", time.Hour); err != nil {
		t.Fatalf("removing the node once its job is recovered: %v", err)
	}
}

// The store's NodeRemove deletes the row only as the caller read it: not
// once the node spoke since, nor once another process holds the name,
// whatever the node's state.
func testNodeRemoveGuarded(t *testing.T, s engine.Store) {
	ctx := t.Context()
	read := register(t, s, sampleNode("alpha"))
	waitDBClockPast(t, s, read.LastSeen)
	if _, err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: "alpha"}); err != nil {
		t.Fatal(err)
	}
	err := s.NodeRemove(ctx, engine.NodeRemoveParams{Name: "alpha", Process: read.Process, LastSeen: read.LastSeen})
	wantErrIs(t, "removing a node that spoke since it was read", err, engine.ErrConflict)
	now := getNode(t, s, "alpha")
	other := now.Process
	other.PID++
	err = s.NodeRemove(ctx, engine.NodeRemoveParams{Name: "alpha", Process: other, LastSeen: now.LastSeen})
	wantErrIs(t, "removing a node held by another process", err, engine.ErrConflict)
	getNode(t, s, "alpha")
	if err := s.NodeRemove(ctx, engine.NodeRemoveParams{Name: "alpha", Process: now.Process, LastSeen: now.LastSeen}); err != nil {
		t.Fatalf("removing a live node as it was read: %v", err)
	}
	err = s.NodeRemove(ctx, engine.NodeRemoveParams{Name: "alpha", Process: now.Process, LastSeen: now.LastSeen})
	wantErrIs(t, "removing an unknown node", err, engine.ErrNotFound)
}

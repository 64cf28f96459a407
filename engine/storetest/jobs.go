package storetest

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var jobTests = []subtest{
	{"JobInsertAllFields", testJobInsertAllFields},
	{"JobInsertDefaults", testJobInsertDefaults},
	{"JobInsertHeld", testJobInsertHeld},
	{"JobInsertInvalid", testJobInsertInvalid},
	{"JobInsertUnknownParent", testJobInsertUnknownParent},
	{"JobGetNotFound", testJobGetNotFound},
	{"JobListFilters", testJobListFilters},
	{"JobListLimit", testJobListLimit},
	{"JobListBrief", testJobListBrief},
}

// testJobListBrief: a brief listing holds the same jobs as a full one,
// each exactly its Brief, on both of the store's paths (live statuses, and
// any filter).
func testJobListBrief(t *testing.T, s engine.Store) {
	parent := queued(t, s, 1)
	insert(t, s, engine.JobInsertParams{Type: "sleep", Key: "k", ParentID: &parent.ID, Args: []string{"a"},
		Payload: []byte(`{"x":1}`), MaxAttempts: 3, Creator: "alice"})
	start(t, s, insert(t, s, engine.JobInsertParams{Type: "exec", Load: 2.5}), "n1")
	for _, p := range []engine.JobListParams{
		{},
		{Statuses: engine.RecoverableStatuses},
		{Node: "n1", Statuses: engine.RecoverableStatuses},
		{Types: []string{"sleep"}, Limit: 1},
	} {
		full, err := s.JobList(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		p.Brief = true
		brief, err := s.JobList(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(full) == 0 || len(brief) != len(full) {
			t.Fatalf("JobList(%+v): %d brief jobs, %d full ones", p, len(brief), len(full))
		}
		for i := range full {
			if want := full[i].Brief(); !reflect.DeepEqual(brief[i], want) {
				t.Errorf("JobList(%+v) job %d:\n brief %+v\n want  %+v", p, i, brief[i], want)
			}
		}
	}
}

func testJobInsertAllFields(t *testing.T, s engine.Store) {
	parent := queued(t, s, 1)
	runAfter := dbNow(t, s).Add(time.Hour).Truncate(time.Millisecond)
	before := dbNow(t, s)
	p := engine.JobInsertParams{
		Type:        engine.TypeExec,
		Operation:   "build",
		Args:        []string{"echo", "hello world", "ünïcödé", "", "$(rm -rf /)"},
		Payload:     json.RawMessage(`{"a":[1,2],"b":"x"}`),
		Load:        2.5,
		Status:      engine.StatusQueued,
		Key:         "repo/main",
		ParentID:    &parent.ID,
		MaxAttempts: 3,
		Backoff:     1500 * time.Millisecond,
		Rollback:    "cleanup",
		RunAfter:    &runAfter,
		Timeout:     90 * time.Second,
		Creator:     "alice",
	}
	j := insert(t, s, p)
	after := dbNow(t, s)

	if j.ID <= parent.ID {
		t.Errorf("ID = %d, want above the earlier job's %d", j.ID, parent.ID)
	}
	if j.Type != p.Type || j.Operation != p.Operation || j.Load != p.Load || j.Key != p.Key ||
		j.Rollback != p.Rollback || j.Creator != p.Creator || j.MaxAttempts != 3 {
		t.Errorf("scalar fields differ: got %+v, inserted %+v", j, p)
	}
	if !slices.Equal(j.Args, p.Args) {
		t.Errorf("Args = %q, want %q", j.Args, p.Args)
	}
	var gotPayload, wantPayload any
	if err := json.Unmarshal(j.Payload, &gotPayload); err != nil {
		t.Fatalf("Payload %q: %v", j.Payload, err)
	}
	_ = json.Unmarshal(p.Payload, &wantPayload)
	if !reflect.DeepEqual(gotPayload, wantPayload) {
		t.Errorf("Payload = %s, want %s", j.Payload, p.Payload)
	}
	if j.Status != engine.StatusQueued || j.Node != "" || j.Attempt != 0 || j.Progress != 0 ||
		j.ProgressMessage != "" || j.ExitCode != nil || j.Message != "" {
		t.Errorf("a new job should be QUEUED, unplaced, unrun: %+v", j)
	}
	if j.ParentID == nil || *j.ParentID != parent.ID {
		t.Errorf("ParentID = %v, want %d", j.ParentID, parent.ID)
	}
	if time.Duration(j.Backoff) != p.Backoff || time.Duration(j.Timeout) != p.Timeout {
		t.Errorf("Backoff, Timeout = %s, %s; want %s, %s", time.Duration(j.Backoff), time.Duration(j.Timeout), p.Backoff, p.Timeout)
	}
	if j.RunAfter == nil || !j.RunAfter.Equal(runAfter) {
		t.Errorf("RunAfter = %v, want %s", j.RunAfter, runAfter)
	} else {
		wantUTC(t, "RunAfter", *j.RunAfter)
	}
	wantUTC(t, "CreatedAt", j.CreatedAt)
	if !within(j.CreatedAt, before, after) {
		t.Errorf("CreatedAt = %s, want the database time of the insert, within [%s, %s]", j.CreatedAt, before, after)
	}
	if j.QueuedAt == nil || !within(*j.QueuedAt, before, after) {
		t.Errorf("QueuedAt = %v, want set at insert within [%s, %s]", j.QueuedAt, before, after)
	}
	if j.StartedAt != nil || j.FinishedAt != nil {
		t.Errorf("StartedAt, FinishedAt = %v, %v; want nil", j.StartedAt, j.FinishedAt)
	}
	if again := get(t, s, j.ID); !reflect.DeepEqual(again, j) {
		t.Errorf("JobGet differs from what JobInsert returned:\n get    %+v\n insert %+v", again, j)
	}
}

func testJobInsertDefaults(t *testing.T, s engine.Store) {
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if j.Args == nil || len(j.Args) != 0 {
		t.Errorf("Args = %#v, want an empty, non-nil list", j.Args)
	}
	if string(j.Payload) != "{}" {
		t.Errorf("Payload = %q, want {}", j.Payload)
	}
	if j.MaxAttempts != 1 {
		t.Errorf("MaxAttempts = %d, want 1 for 0", j.MaxAttempts)
	}
	if time.Duration(j.Timeout) != engine.DefaultJobTimeout {
		t.Errorf("Timeout = %s, want the default %s", time.Duration(j.Timeout), engine.DefaultJobTimeout)
	}
	if j.ParentID != nil || j.RunAfter != nil || j.Key != "" || j.Backoff != 0 {
		t.Errorf("unset fields should stay empty: %+v", j)
	}
	// JSON of `jobctl show -o json`: args is a list, never null.
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, isList := m["args"].([]any); !isList {
		t.Errorf("args in JSON = %v, want a list", m["args"])
	}
}

func testJobInsertHeld(t *testing.T, s engine.Store) {
	j := insert(t, s, engine.JobInsertParams{Status: engine.StatusInstantiated})
	if j.Status != engine.StatusInstantiated {
		t.Errorf("Status = %s, want INSTANTIATED", j.Status)
	}
	if j.QueuedAt != nil {
		t.Errorf("QueuedAt = %v, want nil for a held job", j.QueuedAt)
	}
	before := dbNow(t, s)
	j = admin(t, s, j, engine.VerbRelease)
	if j.QueuedAt == nil || j.QueuedAt.Before(before) {
		t.Errorf("QueuedAt = %v after release, want at or after %s", j.QueuedAt, before)
	}
}

func testJobInsertInvalid(t *testing.T, s engine.Store) {
	for _, tc := range []struct {
		name string
		p    engine.JobInsertParams
	}{
		{"empty type", engine.JobInsertParams{Status: engine.StatusQueued}},
		{"negative load", engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, Load: -1}},
		{"NaN load", engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, Load: math.NaN()}},
		{"infinite load", engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, Load: math.Inf(1)}},
		{"running status", engine.JobInsertParams{Type: "noop", Status: engine.StatusRunning}},
		{"no status", engine.JobInsertParams{Type: "noop"}},
		{"negative attempts", engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, MaxAttempts: -1}},
		{"negative timeout", engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, Timeout: -time.Second}},
		{"payload not JSON", engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, Payload: json.RawMessage(`{"a":`)}},
	} {
		if j, err := s.JobInsert(t.Context(), tc.p); err == nil {
			t.Errorf("%s: JobInsert accepted it as job %d", tc.name, j.ID)
		}
	}
	if jobs, err := s.JobList(t.Context(), engine.JobListParams{}); err != nil || len(jobs) != 0 {
		t.Errorf("after refused inserts: %d jobs, %v; want none", len(jobs), err)
	}
}

func testJobInsertUnknownParent(t *testing.T, s engine.Store) {
	_, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, ParentID: engine.Ptr(int64(424242))})
	wantErrIs(t, "JobInsert with an unknown parent", err, engine.ErrNotFound)
}

func testJobGetNotFound(t *testing.T, s engine.Store) {
	_, err := s.JobGet(t.Context(), 424242)
	var nf *engine.NotFoundError
	if !errors.As(err, &nf) || nf.What != "job" || nf.ID != "424242" {
		t.Fatalf("JobGet(unknown) = %v, want *NotFoundError for job 424242", err)
	}
	wantErrIs(t, "JobGet(unknown)", err, engine.ErrNotFound)
}

func testJobListFilters(t *testing.T, s engine.Store) {
	j1 := insert(t, s, engine.JobInsertParams{Type: "noop", Key: "a"})
	j2 := insert(t, s, engine.JobInsertParams{Type: "sleep", Key: "b"})
	j3 := insert(t, s, engine.JobInsertParams{Type: "noop", Key: "a", Status: engine.StatusInstantiated, ParentID: &j1.ID})
	j4 := start(t, s, insert(t, s, engine.JobInsertParams{Type: "exec"}), "n1")
	j5 := insert(t, s, engine.JobInsertParams{Type: "noop", ParentID: &j1.ID})

	list := func(p engine.JobListParams) []*engine.Job {
		t.Helper()
		jobs, err := s.JobList(t.Context(), p)
		if err != nil {
			t.Fatalf("JobList(%+v): %v", p, err)
		}
		return jobs
	}
	all := list(engine.JobListParams{})
	wantIDs(t, "no filter", all, j1, j2, j3, j4, j5)
	if len(all) == 5 && !reflect.DeepEqual(all[3], get(t, s, j4.ID)) {
		t.Errorf("listed job differs from JobGet: %+v", all[3])
	}
	wantIDs(t, "QUEUED", list(engine.JobListParams{Statuses: []engine.Status{engine.StatusQueued}}), j1, j2, j5)
	wantIDs(t, "QUEUED or INSTANTIATED", list(engine.JobListParams{Statuses: []engine.Status{engine.StatusInstantiated, engine.StatusQueued}}), j1, j2, j3, j5)
	wantIDs(t, "FAILED", list(engine.JobListParams{Statuses: []engine.Status{engine.StatusFailed}}))
	wantIDs(t, "type noop", list(engine.JobListParams{Types: []string{"noop"}}), j1, j3, j5)
	wantIDs(t, "type noop or sleep", list(engine.JobListParams{Types: []string{"sleep", "noop"}}), j1, j2, j3, j5)
	wantIDs(t, "node n1", list(engine.JobListParams{Node: "n1"}), j4)
	wantIDs(t, "key a", list(engine.JobListParams{Key: "a"}), j1, j3)
	wantIDs(t, "parent j1", list(engine.JobListParams{ParentID: &j1.ID}), j3, j5)
	wantIDs(t, "roots", list(engine.JobListParams{Roots: true}), j1, j2, j4)
	wantIDs(t, "noop roots", list(engine.JobListParams{Roots: true, Types: []string{"noop"}}), j1)
	wantIDs(t, "roots that are children", list(engine.JobListParams{Roots: true, ParentID: &j1.ID}))
	wantIDs(t, "noop and QUEUED", list(engine.JobListParams{Types: []string{"noop"}, Statuses: []engine.Status{engine.StatusQueued}}), j1, j5)
	wantIDs(t, "key a, parent j1, INSTANTIATED", list(engine.JobListParams{Key: "a", ParentID: &j1.ID, Statuses: []engine.Status{engine.StatusInstantiated}}), j3)
	wantIDs(t, "unknown node", list(engine.JobListParams{Node: "nowhere"}))
}

func testJobListLimit(t *testing.T, s engine.Store) {
	var jobs []*engine.Job
	for i := 0; i < 5; i++ {
		typ := "noop"
		if i%2 == 1 {
			typ = "sleep"
		}
		jobs = append(jobs, insert(t, s, engine.JobInsertParams{Type: typ}))
	}
	got, err := s.JobList(t.Context(), engine.JobListParams{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "limit 2: the newest two, oldest first", got, jobs[3], jobs[4])
	got, err = s.JobList(t.Context(), engine.JobListParams{Limit: 2, Types: []string{"noop"}})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "limit 2 of noop", got, jobs[2], jobs[4])
	got, err = s.JobList(t.Context(), engine.JobListParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "limit above the count", got, jobs...)
}

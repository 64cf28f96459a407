package storetest

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var submitTests = []subtest{
	{"SchemaCurrent", testSchemaCurrent},
	{"JobSubmitServiceDefaults", testJobSubmitServiceDefaults},
	{"JobSubmitOwnValues", testJobSubmitOwnValues},
	{"JobSubmitRunIn", testJobSubmitRunIn},
	{"JobSubmitRefused", testJobSubmitRefused},
}

// A migrated store is current.
func testSchemaCurrent(t *testing.T, s engine.Store) {
	ok, err := s.SchemaCurrent(t.Context())
	if err != nil || !ok {
		t.Errorf("SchemaCurrent of a migrated store = %v, %v; want true", ok, err)
	}
}

func submitJob(t *testing.T, s engine.Store, p engine.JobSubmitParams) (engine.JobSubmitted, *engine.Job) {
	t.Helper()
	if p.Type == "" {
		p.Type = engine.TypeNoop
	}
	if p.Status == "" {
		p.Status = engine.StatusQueued
	}
	sub, err := s.JobSubmit(t.Context(), p)
	if err != nil {
		t.Fatalf("JobSubmit(%+v): %v", p, err)
	}
	j, err := s.JobGet(t.Context(), sub.ID)
	if err != nil {
		t.Fatalf("JobGet(%d) of a submitted job: %v", sub.ID, err)
	}
	return sub, j
}

// The load and timeout left to the services come from an ONLINE node's
// service of the type (the first by name), else from any node's, as
// engine.ServiceDefaults picks them; a type no node offers keeps the
// job's own values and is not offered.
func testJobSubmitServiceDefaults(t *testing.T, s engine.Store) {
	svc := func(typ string, load float64, timeout time.Duration) engine.NodeService {
		return engine.NodeService{Type: typ, Load: load, Timeout: engine.Duration(timeout)}
	}
	register(t, s, engine.Node{Name: "a-offline", Services: []engine.NodeService{svc("encode", 2.5, time.Hour), svc("zip", 3, 0)}})
	if err := s.NodeSetState(t.Context(), "a-offline", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	register(t, s, engine.Node{Name: "b-maintenance", Services: []engine.NodeService{svc("encode", 6, 3*time.Hour)}})
	if err := s.NodeSetMaintenance(t.Context(), "b-maintenance", true); err != nil {
		t.Fatal(err)
	}
	register(t, s, engine.Node{Name: "c-online", Services: []engine.NodeService{svc("encode", 4, 2*time.Hour), svc("noop", 0, 0)}})
	register(t, s, engine.Node{Name: "d-online", Services: []engine.NodeService{svc("encode", 8, 5*time.Hour)}})

	for _, tt := range []struct {
		typ         string
		wantLoad    float64
		wantTimeout time.Duration
		wantOffered bool
	}{
		{"encode", 4, 2 * time.Hour, true},     // c-online: the first ONLINE node by name
		{"zip", 3, 7 * time.Minute, true},      // only the OFFLINE node offers it; no timeout of its own
		{"noop", 1, 7 * time.Minute, true},     // offered, with no settings
		{"unknown", 1, 7 * time.Minute, false}, // no node offers it
		{"Encode", 1, 7 * time.Minute, false},  // types compare exactly
	} {
		sub, j := submitJob(t, s, engine.JobSubmitParams{
			JobInsertParams: engine.JobInsertParams{Type: tt.typ, Load: 1, Timeout: 7 * time.Minute, Creator: "cli"},
			ServiceLoad:     true, ServiceTimeout: true,
		})
		if sub.Offered != tt.wantOffered || j.Load != tt.wantLoad || time.Duration(j.Timeout) != tt.wantTimeout {
			t.Errorf("%s: offered %v, load %v, timeout %s; want %v, %v, %s", tt.typ, sub.Offered, j.Load,
				time.Duration(j.Timeout), tt.wantOffered, tt.wantLoad, tt.wantTimeout)
		}
		if j.Type != tt.typ || j.Status != engine.StatusQueued || j.QueuedAt == nil || j.Creator != "cli" {
			t.Errorf("%s: job %+v", tt.typ, j)
		}
	}
}

// What the job gives itself stands, whatever the services say; every
// field is stored as JobInsert stores it.
func testJobSubmitOwnValues(t *testing.T, s engine.Store) {
	register(t, s, engine.Node{Name: "n1", Services: []engine.NodeService{
		{Type: "encode", Load: 4, Timeout: engine.Duration(time.Hour)}}})
	parent := queued(t, s, 1)
	p := engine.JobInsertParams{Type: "encode", Operation: "op", Args: []string{"a", "b c"}, Payload: []byte(`{"x":1}`),
		Load: 0.5, Status: engine.StatusInstantiated, Key: "k", ParentID: &parent.ID, MaxAttempts: 3,
		Backoff: 4 * time.Second, Rollback: "undo it", RollbackType: "noop", Timeout: time.Minute, Creator: "me"}
	sub, got := submitJob(t, s, engine.JobSubmitParams{JobInsertParams: p})
	want := insert(t, s, p)
	if !sub.Offered {
		t.Error("encode is offered by n1")
	}
	if got.Load != 0.5 || time.Duration(got.Timeout) != time.Minute || got.QueuedAt != nil {
		t.Errorf("submitted %+v; want its own load 0.5, timeout 1m, held", got)
	}
	sameJob(t, "a submitted job", got, want)
}

// A delay counts from the database clock.
func testJobSubmitRunIn(t *testing.T, s engine.Store) {
	before := dbNow(t, s)
	delay := 90 * time.Second
	_, j := submitJob(t, s, engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Load: 1}, RunIn: &delay})
	after := dbNow(t, s)
	if j.RunAfter == nil || j.RunAfter.Before(before.Add(delay-time.Millisecond)) || j.RunAfter.After(after.Add(delay+time.Millisecond)) {
		t.Errorf("run after %v; want %s after a database time between %s and %s", j.RunAfter, delay, before, after)
	}
}

// A job the checks refuse writes nothing.
func testJobSubmitRefused(t *testing.T, s engine.Store) {
	missing := int64(1 << 40)
	for what, tt := range map[string]struct {
		p      engine.JobSubmitParams
		target error
	}{
		"a negative load":      {engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: "noop", Load: -1, Status: engine.StatusQueued}}, engine.ErrInvalid},
		"no type":              {engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Load: 1, Status: engine.StatusQueued}}, engine.ErrInvalid},
		"a parent that is not": {engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: "noop", Load: 1, Status: engine.StatusQueued, ParentID: &missing}}, engine.ErrNotFound},
	} {
		_, err := s.JobSubmit(t.Context(), tt.p)
		wantErrIs(t, what, err, tt.target)
	}
	if jobs, err := s.JobList(t.Context(), engine.JobListParams{}); err != nil || len(jobs) != 0 {
		t.Errorf("after refused submits: %d jobs, %v; want none", len(jobs), err)
	}
}

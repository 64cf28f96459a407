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
	{"JobSubmitNodesOffer", testJobSubmitNodesOffer},
}

// A migrated store is current.
func testSchemaCurrent(t *testing.T, s engine.Store) {
	ok, err := s.SchemaCurrent(t.Context())
	if err != nil || !ok {
		t.Errorf("SchemaCurrent of a migrated store = %v, %v; want true", ok, err)
	}
}

// submitJob submits p, by alice unless p names another event, and
// checks the job's event was recorded with it.
func submitJob(t *testing.T, s engine.Store, p engine.JobSubmitParams) (engine.JobSubmitted, *engine.Job) {
	t.Helper()
	if p.Type == "" {
		p.Type = engine.TypeNoop
	}
	if p.Status == "" {
		p.Status = engine.StatusQueued
	}
	if p.Event.Verb == "" {
		p.Event = engine.EventAppendParams{Who: "alice@host1", Verb: engine.EventSubmit, Detail: "QUEUED", Reason: "why not"}
	}
	sub, err := s.JobSubmit(t.Context(), p)
	if err != nil {
		t.Fatalf("JobSubmit(%+v): %v", p, err)
	}
	j, err := s.JobGet(t.Context(), sub.ID)
	if err != nil {
		t.Fatalf("JobGet(%d) of a submitted job: %v", sub.ID, err)
	}
	if sub.Load != j.Load {
		t.Errorf("JobSubmit says load %v; the job has %v", sub.Load, j.Load)
	}
	events, err := s.EventList(t.Context(), engine.EventListParams{JobID: &sub.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("job %d has %d events; want its submit: %+v", sub.ID, len(events), events)
	}
	if e := events[0]; e.Who != p.Event.Who || e.Verb != p.Event.Verb || e.Detail != p.Event.Detail ||
		e.Reason != p.Event.Reason || e.Type != j.Type || e.JobID == nil || *e.JobID != sub.ID {
		t.Errorf("job %d's event %+v; want %+v naming the job and its type %s", sub.ID, e, p.Event, j.Type)
	}
	return sub, j
}

// The load, timeout and memory limit left to the services come from an ONLINE node's
// service of the type (the first by name), else from any node's, as
// engine.ServiceDefaults picks them; a type no node offers keeps the
// job's own values and is not offered.
func testJobSubmitServiceDefaults(t *testing.T, s engine.Store) {
	svc := func(typ string, load float64, timeout time.Duration) engine.NodeService {
		return engine.NodeService{Type: typ, Load: load, Timeout: engine.Duration(timeout), Memory: int64(load) << 30}
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

	const ownMemory = 64 << 20
	for _, tt := range []struct {
		typ         string
		wantLoad    float64
		wantTimeout time.Duration
		wantMemory  int64
		wantOffered bool
	}{
		{"encode", 4, 2 * time.Hour, 4 << 30, true},       // c-online: the first ONLINE node by name
		{"zip", 3, 7 * time.Minute, 3 << 30, true},        // only the OFFLINE node offers it; no timeout of its own
		{"noop", 1, 7 * time.Minute, ownMemory, true},     // offered, with no settings
		{"unknown", 1, 7 * time.Minute, ownMemory, false}, // no node offers it
		{"Encode", 1, 7 * time.Minute, ownMemory, false},  // types compare exactly
	} {
		sub, j := submitJob(t, s, engine.JobSubmitParams{
			JobInsertParams: engine.JobInsertParams{Type: tt.typ, Load: 1, Timeout: 7 * time.Minute, MemoryLimit: ownMemory, Creator: "cli"},
			ServiceLoad:     true, ServiceTimeout: true, ServiceMemory: true,
		})
		if sub.Offered != tt.wantOffered || j.Load != tt.wantLoad || time.Duration(j.Timeout) != tt.wantTimeout ||
			j.MemoryLimit != tt.wantMemory {
			t.Errorf("%s: offered %v, load %v, timeout %s, memory limit %d; want %v, %v, %s, %d", tt.typ, sub.Offered, j.Load,
				time.Duration(j.Timeout), j.MemoryLimit, tt.wantOffered, tt.wantLoad, tt.wantTimeout, tt.wantMemory)
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
		Backoff: 4 * time.Second, Rollback: "undo it", RollbackType: "noop", Timeout: time.Minute, Creator: "me",
		Priority: 70, MemoryLimit: 256 << 20}
	sub, got := submitJob(t, s, engine.JobSubmitParams{JobInsertParams: p})
	want := insert(t, s, p)
	if !sub.Offered {
		t.Error("encode is offered by n1")
	}
	if got.Load != 0.5 || time.Duration(got.Timeout) != time.Minute || got.QueuedAt != nil || got.Priority != 70 ||
		got.MemoryLimit != 256<<20 {
		t.Errorf("submitted %+v; want its own load 0.5, timeout 1m, priority 70, memory limit 256MiB, held", got)
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

// A job the checks refuse writes nothing, nor does an event the store
// would refuse.
func testJobSubmitRefused(t *testing.T, s engine.Store) {
	missing := int64(1 << 40)
	by := engine.EventAppendParams{Who: "alice@host1", Verb: engine.EventSubmit}
	job := engine.JobInsertParams{Type: "noop", Load: 1, Status: engine.StatusQueued}
	withParent := job
	withParent.ParentID = &missing
	for what, tt := range map[string]struct {
		p      engine.JobSubmitParams
		target error
	}{
		"a negative load":      {engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: "noop", Load: -1, Status: engine.StatusQueued}, Event: by}, engine.ErrInvalid},
		"no type":              {engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Load: 1, Status: engine.StatusQueued}, Event: by}, engine.ErrInvalid},
		"a parent that is not": {engine.JobSubmitParams{JobInsertParams: withParent, Event: by}, engine.ErrNotFound},
		"nobody submits":       {engine.JobSubmitParams{JobInsertParams: job, Event: engine.EventAppendParams{Verb: engine.EventSubmit}}, engine.ErrInvalid},
		"a reason with a tab":  {engine.JobSubmitParams{JobInsertParams: job, Event: engine.EventAppendParams{Who: "a@b", Verb: engine.EventSubmit, Reason: "a\tb"}}, engine.ErrInvalid},
	} {
		_, err := s.JobSubmit(t.Context(), tt.p)
		wantErrIs(t, what, err, tt.target)
	}
	if jobs, err := s.JobList(t.Context(), engine.JobListParams{}); err != nil || len(jobs) != 0 {
		t.Errorf("after refused submits: %d jobs, %v; want none", len(jobs), err)
	}
	if events, err := s.EventList(t.Context(), engine.EventListParams{}); err != nil || len(events) != 0 {
		t.Errorf("after refused submits: %d events, %v; want none", len(events), err)
	}
}

// What the nodes offer a type comes back with the job: whether any node
// offers it, and the largest max load of the ONLINE nodes offering it
// (not OFFLINE, not in maintenance), as engine.SubmitDefaults tells it.
func testJobSubmitNodesOffer(t *testing.T, s engine.Store) {
	offers := func(types ...string) []engine.NodeService {
		var out []engine.NodeService
		for _, typ := range types {
			out = append(out, engine.NodeService{Type: typ})
		}
		return out
	}
	register(t, s, engine.Node{Name: "big-offline", MaxLoad: 64, Services: offers("encode", "zip")})
	if err := s.NodeSetState(t.Context(), "big-offline", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	register(t, s, engine.Node{Name: "big-resting", MaxLoad: 32, Services: offers("encode", "mail")})
	if err := s.NodeSetMaintenance(t.Context(), "big-resting", true); err != nil {
		t.Fatal(err)
	}
	register(t, s, engine.Node{Name: "small", MaxLoad: 2, Services: offers("encode", "noop")})
	register(t, s, engine.Node{Name: "medium", MaxLoad: 6, Services: offers("encode")})
	register(t, s, engine.Node{Name: "tiny", MaxLoad: 0, Services: offers("tick")})
	nodes, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"encode", "zip", "mail", "noop", "tick", "unknown"} {
		sub, _ := submitJob(t, s, engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: typ, Load: 1}})
		_, want := engine.SubmitDefaults(nodes, engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: typ, Load: 1}})
		want.ID = sub.ID
		if sub != want {
			t.Errorf("%s: JobSubmit says %+v; want %+v", typ, sub, want)
		}
	}
	want := map[string]engine.JobSubmitted{
		"encode": {Load: 1, Offered: true, OnlineOffered: true, LargestMaxLoad: 6},
		"zip":    {Load: 1, Offered: true},
		"mail":   {Load: 1, Offered: true},
		"tick":   {Load: 1, Offered: true, OnlineOffered: true, LargestMaxLoad: 0},
		"noop":   {Load: 1, Offered: true, OnlineOffered: true, LargestMaxLoad: 2},
	}
	for typ, w := range want {
		if _, got := engine.SubmitDefaults(nodes, engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: typ, Load: 1}}); got != w {
			t.Errorf("SubmitDefaults for %s: %+v; want %+v", typ, got, w)
		}
	}
}

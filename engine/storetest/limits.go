package storetest

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var limitTests = []subtest{
	{"JobInsertLimitsAccepted", testJobInsertLimitsAccepted},
	{"JobInsertLimitsRefused", testJobInsertLimitsRefused},
}

// payloadOfSize is a JSON object of exactly n bytes.
func payloadOfSize(n int) json.RawMessage {
	const frame = `{"a":""}`
	return json.RawMessage(`{"a":"` + strings.Repeat("x", n-len(frame)) + `"}`)
}

// Every field at its limit fits every backend, and comes back as it went in.
func testJobInsertLimitsAccepted(t *testing.T, s engine.Store) {
	// Characters, not bytes: two bytes each in UTF-8.
	long := strings.Repeat("ü", engine.MaxNameLength)
	p := engine.JobInsertParams{
		Type:        long,
		Operation:   long,
		Key:         long,
		Creator:     long,
		Status:      engine.StatusQueued,
		Load:        engine.MaxJobLoad,
		MaxAttempts: engine.MaxAttemptsLimit,
		Payload:     payloadOfSize(engine.MaxPayloadBytes),
		Rollback:    strings.Repeat("r", engine.MaxRollbackBytes),
		Timeout:     engine.MaxJobTimeout,
		Backoff:     engine.MaxJobBackoff,
	}
	j := insert(t, s, p)
	got := get(t, s, j.ID)
	if got.Type != long || got.Operation != long || got.Key != long || got.Creator != long {
		t.Errorf("255-character names did not come back whole: type %d, operation %d, key %d, creator %d characters",
			len([]rune(got.Type)), len([]rune(got.Operation)), len([]rune(got.Key)), len([]rune(got.Creator)))
	}
	if got.MaxAttempts != engine.MaxAttemptsLimit || got.Load != engine.MaxJobLoad || len(got.Payload) != engine.MaxPayloadBytes ||
		got.Rollback != p.Rollback {
		t.Errorf("fields at their limits: max attempts %d, load %v, payload %d bytes, rollback %d bytes",
			got.MaxAttempts, got.Load, len(got.Payload), len(got.Rollback))
	}
	wantIDs(t, "listing by the long key", list(t, s, engine.JobListParams{Key: long}), j)
}

func list(t *testing.T, s engine.Store, p engine.JobListParams) []*engine.Job {
	t.Helper()
	jobs, err := s.JobList(t.Context(), p)
	if err != nil {
		t.Fatalf("JobList(%+v): %v", p, err)
	}
	return jobs
}

// Past a limit the store refuses the job with an *InvalidError, the same
// on every backend, never with a database's own error, and writes nothing.
func testJobInsertLimitsRefused(t *testing.T, s engine.Store) {
	tooLong := strings.Repeat("ü", engine.MaxNameLength+1)
	valid := func(edit func(p *engine.JobInsertParams)) engine.JobInsertParams {
		p := engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: 1}
		edit(&p)
		return p
	}
	for _, tc := range []struct {
		name string
		p    engine.JobInsertParams
	}{
		{"256-character type", valid(func(p *engine.JobInsertParams) { p.Type = tooLong })},
		{"256-character operation", valid(func(p *engine.JobInsertParams) { p.Operation = tooLong })},
		{"256-character key", valid(func(p *engine.JobInsertParams) { p.Key = tooLong })},
		{"256-character creator", valid(func(p *engine.JobInsertParams) { p.Creator = tooLong })},
		{"payload over the limit", valid(func(p *engine.JobInsertParams) { p.Payload = payloadOfSize(engine.MaxPayloadBytes + 1) })},
		{"payload with NUL", valid(func(p *engine.JobInsertParams) { p.Payload = json.RawMessage(`{"a":"\u0000"}`) })},
		{"max attempts over the limit", valid(func(p *engine.JobInsertParams) { p.MaxAttempts = engine.MaxAttemptsLimit + 1 })},
		{"NaN load", valid(func(p *engine.JobInsertParams) { p.Load = math.NaN() })},
		{"negative load", valid(func(p *engine.JobInsertParams) { p.Load = -0.5 })},
		{"load over the limit", valid(func(p *engine.JobInsertParams) { p.Load = engine.MaxJobLoad * 2 })},
		{"newline in key", valid(func(p *engine.JobInsertParams) { p.Key = "a\nb" })},
		{"NUL in type", valid(func(p *engine.JobInsertParams) { p.Type = "no\x00op" })},
		{"DEL in operation", valid(func(p *engine.JobInsertParams) { p.Operation = "build\x7f" })},
		{"escape in creator", valid(func(p *engine.JobInsertParams) { p.Creator = "\x1b[31malice" })},
		{"invalid UTF-8 key", valid(func(p *engine.JobInsertParams) { p.Key = "\xff\xfe" })},
		{"NUL in an argument", valid(func(p *engine.JobInsertParams) { p.Args = []string{"a\x00b"} })},
		{"rollback over the limit", valid(func(p *engine.JobInsertParams) { p.Rollback = strings.Repeat("r", engine.MaxRollbackBytes+1) })},
		{"timeout over the limit", valid(func(p *engine.JobInsertParams) { p.Timeout = engine.MaxJobTimeout + 1 })},
	} {
		j, err := s.JobInsert(t.Context(), tc.p)
		if err == nil {
			t.Errorf("%s: accepted as job %d", tc.name, j.ID)
			continue
		}
		var invalid *engine.InvalidError
		if !errors.As(err, &invalid) || !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: got %T %v, want an *engine.InvalidError", tc.name, err, err)
		}
	}
	if jobs := list(t, s, engine.JobListParams{}); len(jobs) != 0 {
		t.Errorf("after refused inserts: %d jobs, want none", len(jobs))
	}
}

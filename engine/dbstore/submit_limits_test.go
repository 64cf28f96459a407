package dbstore

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Over a limit, every backend refuses a submission before writing it, with
// the same *engine.InvalidError and the same message: never a driver's own
// error, never a value clipped by a column.
func TestSubmitLimitsAgreeOnEveryBackend(t *testing.T) {
	t.Parallel()
	stores := map[string]engine.Store{
		"sqlite":   migratedSQLite(t),
		"postgres": migrated(t, openStore(t, postgresSchemaDSN(t))),
		"mysql":    migrated(t, openStore(t, mysqlDatabaseDSN(t))),
		"memory":   memstore.New(engine.SystemClock{}),
	}
	tooLong := strings.Repeat("ü", engine.MaxNameLength+1)
	manyArgs := make([]string, engine.MaxArgs+1)
	for i := range manyArgs {
		manyArgs[i] = "a"
	}
	noop := func(edit func(r *engine.SubmitRequest)) engine.SubmitRequest {
		r := engine.SubmitRequest{Type: engine.TypeNoop}
		edit(&r)
		return r
	}
	cases := map[string]engine.SubmitRequest{
		"type":             noop(func(r *engine.SubmitRequest) { r.Type = tooLong }),
		"operation":        noop(func(r *engine.SubmitRequest) { r.Operation = tooLong }),
		"key":              noop(func(r *engine.SubmitRequest) { r.Key = tooLong }),
		"creator":          noop(func(r *engine.SubmitRequest) { r.Creator = tooLong }),
		"key with newline": noop(func(r *engine.SubmitRequest) { r.Key = "a\nb" }),
		"args count":       noop(func(r *engine.SubmitRequest) { r.Args = manyArgs }),
		"args bytes":       noop(func(r *engine.SubmitRequest) { r.Args = []string{strings.Repeat("x", engine.MaxArgsBytes)} }),
		"payload bytes": noop(func(r *engine.SubmitRequest) {
			r.Payload = json.RawMessage(`"` + strings.Repeat("x", engine.MaxPayloadBytes) + `"`)
		}),
		"payload UTF-8":     noop(func(r *engine.SubmitRequest) { r.Payload = json.RawMessage("\"\xff\"") }),
		"payload NUL":       noop(func(r *engine.SubmitRequest) { r.Payload = json.RawMessage(`"\u0000"`) }),
		"max attempts":      noop(func(r *engine.SubmitRequest) { r.MaxAttempts = engine.MaxAttemptsLimit + 1 }),
		"max attempts huge": noop(func(r *engine.SubmitRequest) { r.MaxAttempts = math.MaxInt32 + 1 }),
		"load NaN":          noop(func(r *engine.SubmitRequest) { r.Load = engine.Ptr(math.NaN()) }),
		"load infinite":     noop(func(r *engine.SubmitRequest) { r.Load = engine.Ptr(math.Inf(1)) }),
		"load too high":     noop(func(r *engine.SubmitRequest) { r.Load = engine.Ptr(engine.MaxJobLoad * 10) }),
		"timeout":           noop(func(r *engine.SubmitRequest) { r.Timeout = engine.Ptr(engine.MaxJobTimeout + time.Second) }),
		"backoff":           noop(func(r *engine.SubmitRequest) { r.Backoff = engine.MaxJobBackoff + time.Second }),
		"negative backoff":  noop(func(r *engine.SubmitRequest) { r.Backoff = -time.Second }),
		"start year":        noop(func(r *engine.SubmitRequest) { r.RunAt = engine.Ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) }),
		"rollback":          noop(func(r *engine.SubmitRequest) { r.Rollback = strings.Repeat("r", engine.MaxRollbackBytes+1) }),
	}
	for name, r := range cases {
		messages := map[string][]string{}
		for backend, s := range stores {
			_, err := engine.Submit(t.Context(), s, nil, r)
			if !errors.Is(err, engine.ErrInvalid) {
				t.Errorf("%s on %s: got %v, want an invalid-input error", name, backend, err)
				continue
			}
			messages[err.Error()] = append(messages[err.Error()], backend)
			_, err = engine.SubmitMany(t.Context(), s, nil, []engine.SubmitRequest{{Type: engine.TypeNoop}, r}, testActor)
			var batch *engine.BatchError
			if !errors.As(err, &batch) || batch.Index != 1 || !errors.Is(err, engine.ErrInvalid) {
				t.Errorf("%s in a batch on %s: got %v, want the second request refused", name, backend, err)
			}
		}
		if len(messages) > 1 {
			t.Errorf("%s: the backends disagree: %v", name, messages)
		}
	}
	for backend, s := range stores {
		jobs, err := s.JobList(t.Context(), engine.JobListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 0 {
			t.Errorf("%s: refused submissions wrote %d jobs", backend, len(jobs))
		}
	}
}

// testActor is the operator of the tests' admin verbs and submits.
var testActor = engine.Actor{Who: "tester@testhost"}

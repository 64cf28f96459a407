package memstore_test

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// TestJobChangesSkipNonWakingWrites: the memory store signals as it writes,
// so it can be held to silence where nothing was freed: a dispatcher's own
// claim and start must not wake it into another round at once, nor a held
// job that nobody may dispatch yet.
func TestJobChangesSkipNonWakingWrites(t *testing.T) {
	t.Parallel()
	s := memstore.New(engine.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	ctx := t.Context()
	queued, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	changes, err := s.JobChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-changes:
			t.Errorf("%s signalled a change", what)
		default:
		}
	}
	if _, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusInstantiated}); err != nil {
		t.Fatal(err)
	}
	quiet("a held job's insert")
	running, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(queued, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	quiet("a start (QUEUED → RUNNING)")
	if _, err := s.JobUpdate(ctx, engine.OutcomeUpdate(running, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 })); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	default:
		t.Error("a finish signalled no change")
	}
}

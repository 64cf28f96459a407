package storetest

import (
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var progressTests = []subtest{
	{"ProgressSet", testProgressSet},
	{"ProgressFencing", testProgressFencing},
}

func setProgress(t *testing.T, s engine.Store, j *engine.Job, node string, attempt, progress int, msg string) error {
	t.Helper()
	return s.JobProgressSet(t.Context(), engine.JobProgressParams{ID: j.ID, Attempt: attempt, Node: node, Progress: progress, Message: msg})
}

func testProgressSet(t *testing.T, s engine.Store) {
	j := start(t, s, queued(t, s, 1), "n1")
	for _, tc := range []struct {
		set, want int
	}{{40, 40}, {150, 100}, {-5, 0}, {100, 100}} {
		if err := setProgress(t, s, j, "n1", j.Attempt, tc.set, "compiling"); err != nil {
			t.Fatalf("progress %d: %v", tc.set, err)
		}
		got := get(t, s, j.ID)
		if got.Progress != tc.want || got.ProgressMessage != "compiling" {
			t.Errorf("progress %d: stored %d %q, want %d %q", tc.set, got.Progress, got.ProgressMessage, tc.want, "compiling")
		}
		// Progress is no transition: a transition read before it still applies.
		if got.Version != j.Version || got.Status != j.Status {
			t.Errorf("progress changed status/version to %s/%d", got.Status, got.Version)
		}
	}
	// A paused running job still reports.
	j = admin(t, s, j, engine.VerbPause)
	if err := setProgress(t, s, j, "n1", j.Attempt, 50, "paused at half"); err != nil {
		t.Errorf("progress of a PAUSED job: %v", err)
	}
}

func testProgressFencing(t *testing.T, s engine.Store) {
	j := start(t, s, queued(t, s, 1), "n1")
	if err := setProgress(t, s, j, "n1", j.Attempt, 10, "first"); err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, "progress from another attempt", setProgress(t, s, j, "n1", j.Attempt+1, 20, "wrong attempt"), engine.ErrConflict)
	wantErrIs(t, "progress from another node", setProgress(t, s, j, "n2", j.Attempt, 30, "wrong node"), engine.ErrConflict)
	// The job moved on to attempt 2 elsewhere: attempt 1's late report is refused.
	j = apply(t, s, engine.RecoverUpdate(j, "node gone"))
	wantErrIs(t, "progress of a job that left RUNNING", setProgress(t, s, j, "n1", j.Attempt, 40, "late"), engine.ErrConflict)
	j = start(t, s, j, "n2")
	wantErrIs(t, "progress of the previous attempt", setProgress(t, s, j, "n1", j.Attempt-1, 50, "late"), engine.ErrConflict)
	if got := get(t, s, j.ID); got.Progress != 10 || got.ProgressMessage != "first" {
		t.Errorf("refused reports changed progress to %d %q", got.Progress, got.ProgressMessage)
	}
	finish(t, s, j, engine.RunSucceeded)
	wantErrIs(t, "progress of a finished job", setProgress(t, s, j, "n2", j.Attempt, 60, "after the end"), engine.ErrConflict)
	wantErrIs(t, "progress of an unknown job",
		s.JobProgressSet(t.Context(), engine.JobProgressParams{ID: 424242, Attempt: 1, Node: "n1", Progress: 1}), engine.ErrNotFound)
}

package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var updateTests = []subtest{
	{"JobUpdateFields", testJobUpdateFields},
	{"JobUpdateClearResult", testJobUpdateClearResult},
	{"JobUpdateRebaseAttempts", testJobUpdateRebaseAttempts},
	{"JobUpdateStaleVersion", testJobUpdateStaleVersion},
	{"JobUpdateStatusChanged", testJobUpdateStatusChanged},
	{"JobUpdateInvalidTransition", testJobUpdateInvalidTransition},
	{"JobUpdateNotFound", testJobUpdateNotFound},
	{"JobUpdateRace", testJobUpdateRace},
}

// sameExcept compares two versions of a job, ignoring the fields a step is
// meant to change.
func sameExcept(t *testing.T, step string, before, after *engine.Job, changed ...string) {
	t.Helper()
	b, a := *before, *after
	bv, av := reflect.ValueOf(&b).Elem(), reflect.ValueOf(&a).Elem()
	for _, f := range append(changed, "Status", "Version") {
		field := bv.FieldByName(f)
		if !field.IsValid() {
			t.Fatalf("no Job field %s", f)
		}
		field.Set(av.FieldByName(f))
	}
	if !reflect.DeepEqual(b, a) {
		t.Errorf("%s changed more than %v:\n before %+v\n after  %+v", step, changed, before, after)
	}
}

func testJobUpdateFields(t *testing.T, s engine.Store) {
	j0 := queued(t, s, 1)

	// Start: the node is set, a new attempt starts, and started_at comes
	// from the database clock.
	before := dbNow(t, s)
	j2 := move(t, s, j0, engine.StatusRunning, func(u *engine.JobUpdate) {
		u.Node = engine.Ptr("n1")
		u.IncrementAttempt = true
		u.MarkStarted = true
	})
	after := dbNow(t, s)
	if j2.Status != engine.StatusRunning || j2.Node != "n1" || j2.Attempt != 1 || j2.Version != j0.Version+1 {
		t.Errorf("start: got %s node %q attempt %d version %d; want RUNNING n1 1 %d",
			j2.Status, j2.Node, j2.Attempt, j2.Version, j0.Version+1)
	}
	if j2.StartedAt == nil || !within(*j2.StartedAt, before, after) {
		t.Errorf("start: StartedAt = %v, want within [%s, %s]", j2.StartedAt, before, after)
	} else {
		wantUTC(t, "StartedAt", *j2.StartedAt)
	}
	sameExcept(t, "start", j0, j2, "Node", "Attempt", "StartedAt")

	// Failure with retry: exit code, message, run_after = db now + 30s, finished_at.
	before = dbNow(t, s)
	j3 := move(t, s, j2, engine.StatusRestart, func(u *engine.JobUpdate) {
		u.ExitCode = engine.Ptr(3)
		u.Message = engine.Ptr("exit status 3, retrying")
		u.RunAfterSeconds = engine.Seconds(30 * time.Second)
		u.MarkFinished = true
	})
	after = dbNow(t, s)
	if j3.ExitCode == nil || *j3.ExitCode != 3 || j3.Message != "exit status 3, retrying" {
		t.Errorf("retry: exit code %v message %q", j3.ExitCode, j3.Message)
	}
	slack := time.Millisecond // SQLite keeps milliseconds
	if j3.RunAfter == nil || !within(*j3.RunAfter, before.Add(30*time.Second-slack), after.Add(30*time.Second+slack)) {
		t.Errorf("retry: RunAfter = %v, want 30s after the update, within [%s, %s] + 30s", j3.RunAfter, before, after)
	}
	if j3.FinishedAt == nil || !within(*j3.FinishedAt, before, after) {
		t.Errorf("retry: FinishedAt = %v, want within [%s, %s]", j3.FinishedAt, before, after)
	}
	sameExcept(t, "retry", j2, j3, "ExitCode", "Message", "RunAfter", "FinishedAt")

	// Pause and resume: the node is cleared with "" and queued_at set.
	j4 := move(t, s, j3, engine.StatusPaused, func(u *engine.JobUpdate) { u.Node = engine.Ptr("") })
	if j4.Node != "" {
		t.Errorf("pause: Node = %q, want cleared", j4.Node)
	}
	sameExcept(t, "pause", j3, j4, "Node")
	before = dbNow(t, s)
	j5 := move(t, s, j4, engine.StatusQueued, func(u *engine.JobUpdate) { u.MarkQueued = true })
	if j5.QueuedAt == nil || j5.QueuedAt.Before(before) {
		t.Errorf("resume: QueuedAt = %v, want at or after %s", j5.QueuedAt, before)
	}
	sameExcept(t, "resume", j4, j5, "QueuedAt")
	if got := get(t, s, j5.ID); !reflect.DeepEqual(got, j5) {
		t.Errorf("JobGet after the updates differs from what JobUpdate returned:\n get    %+v\n update %+v", got, j5)
	}
}

func testJobUpdateClearResult(t *testing.T, s engine.Store) {
	j := start(t, s, queued(t, s, 1), "n1")
	if err := s.JobProgressSet(t.Context(), engine.JobProgressParams{ID: j.ID, Attempt: j.Attempt, Node: "n1", Progress: 100, Message: "done"}); err != nil {
		t.Fatal(err)
	}
	j = get(t, s, j.ID)
	j = move(t, s, j, engine.StatusRestart, func(u *engine.JobUpdate) {
		u.ExitCode = engine.Ptr(1)
		u.RunAfterSeconds = engine.Seconds(time.Hour)
		u.MarkFinished = true
	})
	j = move(t, s, j, engine.StatusCancelled, func(u *engine.JobUpdate) { u.Message = engine.Ptr("cancelled by alice") })
	finished := j
	// Requeue: the result of the last run goes, its history stays.
	j = move(t, s, j, engine.StatusRestart, func(u *engine.JobUpdate) { u.ClearResult = true })
	if j.ExitCode != nil || j.Progress != 0 || j.ProgressMessage != "" || j.FinishedAt != nil || j.RunAfter != nil {
		t.Errorf("requeue: exit code %v, progress %d %q, finished %v, run after %v; want all reset",
			j.ExitCode, j.Progress, j.ProgressMessage, j.FinishedAt, j.RunAfter)
	}
	sameExcept(t, "requeue", finished, j, "ExitCode", "Progress", "ProgressMessage", "FinishedAt", "RunAfter")
	if j.StartedAt == nil || j.Attempt != 1 || j.Node != "n1" || j.Message != "cancelled by alice" {
		t.Errorf("requeue should keep started_at, attempt, node and message: %+v", j)
	}
}

// A requeue gives a fresh set of attempts: the base moves up to the attempt
// made so far, which itself never goes back (it fences late results).
func testJobUpdateRebaseAttempts(t *testing.T, s engine.Store) {
	j := start(t, s, queued(t, s, 1), "n1")
	j = move(t, s, j, engine.StatusFailed, func(u *engine.JobUpdate) { u.MarkFinished = true })
	if j.AttemptBase != 0 || j.AttemptsLeft() != 0 {
		t.Fatalf("after one failed attempt of one: base %d, left %d", j.AttemptBase, j.AttemptsLeft())
	}
	failed := j
	j = move(t, s, j, engine.StatusRestart, func(u *engine.JobUpdate) { u.RebaseAttempts = true })
	if j.Attempt != 1 || j.AttemptBase != 1 || j.AttemptsLeft() != 1 {
		t.Errorf("requeued: attempt %d, base %d, left %d; want 1, 1, 1", j.Attempt, j.AttemptBase, j.AttemptsLeft())
	}
	sameExcept(t, "rebase", failed, j, "AttemptBase")
}

func testJobUpdateStaleVersion(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	moved := start(t, s, j, "n1")
	// A second node that was offered the job before the first one started it.
	_, err := s.JobUpdate(t.Context(), engine.QueuedStartUpdate(j, "n2"))
	wantErrIs(t, "update with a stale status and version", err, engine.ErrConflict)
	// The right status but a stale version.
	_, err = s.JobUpdate(t.Context(), engine.JobUpdate{ID: j.ID, From: engine.StatusRunning, Version: j.Version,
		To: engine.StatusFinished, MarkFinished: true})
	wantErrIs(t, "update with a stale version", err, engine.ErrConflict)
	if got := get(t, s, j.ID); !reflect.DeepEqual(got, moved) {
		t.Errorf("a refused update changed the job:\n now  %+v\n want %+v", got, moved)
	}
}

func testJobUpdateStatusChanged(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	cancelled := move(t, s, j, engine.StatusCancelled, nil)
	// The current version, but the job is no longer QUEUED.
	_, err := s.JobUpdate(t.Context(), engine.JobUpdate{ID: j.ID, From: engine.StatusQueued, Version: cancelled.Version,
		To: engine.StatusRunning, Node: engine.Ptr("n1")})
	wantErrIs(t, "update from a status the job left", err, engine.ErrConflict)
	if got := get(t, s, j.ID); !reflect.DeepEqual(got, cancelled) {
		t.Errorf("a refused update changed the job:\n now  %+v\n want %+v", got, cancelled)
	}
}

func testJobUpdateInvalidTransition(t *testing.T, s engine.Store) {
	j := queued(t, s, 1)
	_, err := s.JobUpdate(t.Context(), engine.JobUpdate{ID: j.ID, From: engine.StatusQueued, Version: j.Version,
		To: engine.StatusFinished, ExitCode: engine.Ptr(0), MarkFinished: true})
	var te *engine.TransitionError
	if !errors.As(err, &te) || te.ID != j.ID || te.From != engine.StatusQueued || te.To != engine.StatusFinished {
		t.Fatalf("QUEUED → FINISHED: got %v, want *TransitionError", err)
	}
	wantErrIs(t, "QUEUED → FINISHED", err, engine.ErrInvalidTransition)
	if got := get(t, s, j.ID); !reflect.DeepEqual(got, j) {
		t.Errorf("a refused transition changed the job:\n now  %+v\n want %+v", got, j)
	}
}

func testJobUpdateNotFound(t *testing.T, s engine.Store) {
	_, err := s.JobUpdate(t.Context(), engine.JobUpdate{ID: 424242, From: engine.StatusQueued, Version: 1, To: engine.StatusCancelled})
	wantErrIs(t, "update of an unknown job", err, engine.ErrNotFound)
	if errors.Is(err, engine.ErrConflict) {
		t.Errorf("update of an unknown job reported a conflict: %v", err)
	}
}

// testJobUpdateRace has several dispatchers race to claim one job with the
// same read: exactly one wins, the others are told they lost.
func testJobUpdateRace(t *testing.T, s engine.Store) {
	const racers = 8
	j := queued(t, s, 1)
	var (
		wg       sync.WaitGroup
		startGun = make(chan struct{})
		errs     = make([]error, racers)
		results  = make([]*engine.Job, racers)
	)
	for i := range racers {
		wg.Go(func() {
			<-startGun
			results[i], errs[i] = s.JobUpdate(t.Context(), engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version,
				To: engine.StatusRunning, Node: engine.Ptr(fmt.Sprintf("n%d", i)), IncrementAttempt: true})
		})
	}
	close(startGun)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("racers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, engine.ErrConflict):
			t.Errorf("racer %d: got %v, want a win or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no racer won")
	}
	got := get(t, s, j.ID)
	want := fmt.Sprintf("n%d", winner)
	if got.Node != want || got.Version != j.Version+1 || got.Attempt != 1 {
		t.Errorf("after the race: node %q version %d attempt %d; want %s %d 1", got.Node, got.Version, got.Attempt, want, j.Version+1)
	}
	if !reflect.DeepEqual(results[winner], got) {
		t.Errorf("the winner's result differs from the stored job:\n result %+v\n stored %+v", results[winner], got)
	}
}

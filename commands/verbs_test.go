package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestVerbParsing(t *testing.T) {
	ios, _, _ := TestIO("")
	for _, v := range engine.Verbs {
		var got *VerbOptions
		cmd := NewCmdVerb(&Factory{IO: ios}, v, func(_ context.Context, o *VerbOptions) error {
			got = o
			return nil
		})
		if err := execParse(cmd, "5", "6", "5"); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got.Verb != v || !slices.Equal(got.IDs, []int64{5, 6}) {
			t.Errorf("%s parsed %+v", v, got)
		}
		for _, args := range [][]string{{}, {"five"}, {"5", "-1"}} {
			cmd := NewCmdVerb(&Factory{IO: ios}, v, func(context.Context, *VerbOptions) error { return nil })
			if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
				t.Errorf("%s %v: %v; want a UsageError", v, args, err)
			}
		}
	}
}

func TestVerbRun(t *testing.T) {
	e := newTestEnv(t)
	queued := e.insert(t, engine.JobInsertParams{})
	running := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	if err := e.run(t, "cancel", fmt.Sprint(queued.ID), fmt.Sprint(running.ID)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d\tCANCELLED\n%d\tCANCELLING\n", queued.ID, running.ID)
	if got := e.stdout.String(); got != want {
		t.Errorf("cancel printed %q; want %q", got, want)
	}
	if err := e.run(t, "requeue", fmt.Sprint(queued.ID)); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, queued.ID); j.Status != engine.StatusRestart {
		t.Errorf("after requeue: %s; want RESTART", j.Status)
	}
}

func TestVerbTerminal(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	held := e.insert(t, engine.JobInsertParams{Status: engine.StatusInstantiated})
	if err := e.run(t, "release", fmt.Sprint(held.ID)); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("job %d: INSTANTIATED → QUEUED\n", held.ID); e.stdout.String() != want {
		t.Errorf("release printed %q; want %q", e.stdout.String(), want)
	}
}

func TestVerbBadInputChangesNothing(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{})
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)

	err := e.run(t, "cancel", fmt.Sprint(a.ID), "999999")
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("cancel with an unknown id: %v; want not found", err)
	}
	err = e.run(t, "pause", fmt.Sprint(a.ID), fmt.Sprint(done.ID))
	if !errors.Is(err, engine.ErrInvalidTransition) {
		t.Fatalf("pause with an ended job: %v; want a refused transition", err)
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("job %d is FINISHED and cannot become PAUSED", done.ID)) {
		t.Errorf("error %q does not say which job and why", err)
	}
	if j := e.get(t, a.ID); j.Status != engine.StatusQueued || j.Version != a.Version {
		t.Errorf("job %d is %s v%d after refused commands; want it untouched", a.ID, j.Status, j.Version)
	}
	if e.stdout.Len() != 0 {
		t.Errorf("stdout %q; want nothing reported as changed", e.stdout.String())
	}

	// Several problems are reported together, and errors.Is sees each.
	err = e.run(t, "delete", fmt.Sprint(a.ID), "999999")
	if !errors.Is(err, engine.ErrNotFound) || !errors.Is(err, engine.ErrInvalidTransition) {
		t.Errorf("error %v; want both the refusal and the unknown id", err)
	}
}

// Repeating a verb, or cancelling a job that ended meanwhile, is not an
// error: the job already is where the verb would take it.
func TestVerbAlreadyDoneIsNotAnError(t *testing.T) {
	e := newTestEnv(t)
	queued := e.insert(t, engine.JobInsertParams{})
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	if err := e.run(t, "cancel", fmt.Sprint(queued.ID), fmt.Sprint(done.ID)); err != nil {
		t.Fatalf("cancel of a queued and an ended job: %v", err)
	}
	want := fmt.Sprintf("%d\tCANCELLED\n%d\tFINISHED\n", queued.ID, done.ID)
	if e.stdout.String() != want {
		t.Errorf("stdout %q; want %q", e.stdout.String(), want)
	}
	if j := e.get(t, done.ID); j.Status != engine.StatusFinished || j.Version != done.Version {
		t.Errorf("the ended job changed: %s v%d", j.Status, j.Version)
	}
	if err := e.run(t, "cancel", fmt.Sprint(queued.ID)); err != nil {
		t.Errorf("cancelling again: %v", err)
	}
}

func TestCancelCascadesToChildren(t *testing.T) {
	e := newTestEnv(t)
	parent := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusWaiting)
	child := e.insert(t, engine.JobInsertParams{ParentID: &parent.ID})
	if err := e.run(t, "cancel", fmt.Sprint(parent.ID)); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, child.ID); j.Status != engine.StatusCancelled {
		t.Errorf("child is %s; want CANCELLED with its parent", j.Status)
	}
}

func TestRepeatedCancelReachesLeftoverChildren(t *testing.T) {
	e := newTestEnv(t)
	parent := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	child := e.insert(t, engine.JobInsertParams{ParentID: &parent.ID}) // left queued under an ended parent
	if err := e.run(t, "cancel", fmt.Sprint(parent.ID)); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, child.ID); j.Status != engine.StatusCancelled {
		t.Errorf("child of an ended parent is %s after cancel; want CANCELLED", j.Status)
	}
}

func TestReleaseOfAPausedJobSaysToResume(t *testing.T) {
	e := newTestEnv(t)
	paused := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusPaused)
	err := e.run(t, "release", fmt.Sprint(paused.ID))
	if !errors.Is(err, engine.ErrInvalidTransition) || !strings.Contains(err.Error(), "resume") {
		t.Errorf("release of a paused job: %v; want a refusal pointing to resume", err)
	}
}

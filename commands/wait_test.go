package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestWaitParsing(t *testing.T) {
	ios, _, _ := TestIO("")
	var got *WaitOptions
	cmd := NewCmdWait(&Factory{IO: ios}, func(_ context.Context, o *WaitOptions) error {
		got = o
		return nil
	})
	if err := execParse(cmd, "3", "1", "3", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.IDs, []int64{3, 1}) || got.Timeout.String() != "2m0s" {
		t.Errorf("ids %v timeout %s; want [3 1] (repeats dropped) and 2m", got.IDs, got.Timeout)
	}
	for _, args := range [][]string{{}, {"x"}, {"0"}, {"1", "--timeout", "-1s"}, {"1", "--timeout", "soon"}} {
		cmd := NewCmdWait(&Factory{IO: ios}, func(context.Context, *WaitOptions) error { return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("wait %v: %v; want a UsageError", args, err)
		}
	}
}

func TestWaitSucceeded(t *testing.T) {
	e := newTestEnv(t)
	a := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	b := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusWarning)
	if err := e.run(t, "wait", fmt.Sprint(a.ID), fmt.Sprint(b.ID)); err != nil {
		t.Fatalf("wait on FINISHED and WARNING: %v; want success", err)
	}
	lines := strings.Split(strings.TrimSpace(e.stdout.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], fmt.Sprintf("%d\tFINISHED\t", a.ID)) ||
		!strings.HasPrefix(lines[1], fmt.Sprintf("%d\tWARNING\t", b.ID)) {
		t.Errorf("stdout %q; want one status row per job", e.stdout.String())
	}
}

func TestWaitFailed(t *testing.T) {
	e := newTestEnv(t)
	ok := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	bad := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFailed)
	err := e.run(t, "wait", fmt.Sprint(ok.ID), fmt.Sprint(bad.ID))
	var failed *WaitFailedError
	if !errors.As(err, &failed) || len(failed.Jobs) != 1 || failed.Jobs[0].ID != bad.ID {
		t.Fatalf("error %v; want a WaitFailedError naming job %d", err, bad.ID)
	}
	if want := fmt.Sprintf("job %d ended FAILED (exit code 3)", bad.ID); err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
}

func TestWaitUntilEnd(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning)
	counting := &countingStore{Store: e.store}
	e.f.Store = func(context.Context) (engine.Store, error) { return counting, nil }
	done := make(chan error, 1)
	go func() { done <- e.run(t, "wait", fmt.Sprint(j.ID)) }()
	// End the job only once the wait has seen it running and polled again.
	waitFor(t, "the wait to poll", func() bool { return counting.gets.Load() >= 2 })
	e.move(t, j, engine.StatusCancelling, engine.StatusCancelled)
	err := <-done
	var failed *WaitFailedError
	if !errors.As(err, &failed) || failed.Jobs[0].Status != engine.StatusCancelled {
		t.Fatalf("error %v; want the job reported CANCELLED", err)
	}
}

func TestWaitTimeout(t *testing.T) {
	e := newTestEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	err := e.run(t, "wait", fmt.Sprint(j.ID), fmt.Sprint(done.ID), "--timeout", "250ms")
	var timeout *WaitTimeoutError
	if !errors.As(err, &timeout) || !slices.Equal(timeout.Pending, []int64{j.ID}) {
		t.Fatalf("error %v; want a WaitTimeoutError for job %d only", err, j.ID)
	}
	if !strings.HasPrefix(e.stdout.String(), fmt.Sprintf("%d\tQUEUED\t", j.ID)) {
		t.Errorf("stdout %q; want the jobs' states as last seen", e.stdout.String())
	}
}

func TestWaitUnknownJob(t *testing.T) {
	e := newTestEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	if err := e.run(t, "wait", fmt.Sprint(j.ID), "424242"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("error %v; want not found at once", err)
	}
}

// countingStore counts JobGet and JobList calls, to tell when a poller
// has polled.
type countingStore struct {
	engine.Store
	gets, lists atomic.Int64
}

func (s *countingStore) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	s.lists.Add(1)
	return s.Store.JobList(ctx, p)
}

func (s *countingStore) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	s.gets.Add(1)
	return s.Store.JobGet(ctx, id)
}

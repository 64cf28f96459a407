package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func (e *testEnv) appendLog(t *testing.T, id int64, attempt int, data string) {
	t.Helper()
	err := e.store.JobLogAppend(context.Background(), engine.JobLogAppendParams{JobID: id, Attempt: attempt, Data: []byte(data)})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLogs(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning,
		engine.StatusRestart, engine.StatusDispatching, engine.StatusRunning) // on its second attempt
	e.appendLog(t, j.ID, 1, "first try\n")
	e.appendLog(t, j.ID, 2, "second \x00binary\n")
	if err := e.run(t, "logs", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), "first try\nsecond \x00binary\n"; got != want {
		t.Errorf("logs = %q; want %q", got, want)
	}
	if err := e.run(t, "logs", fmt.Sprint(j.ID), "--attempt", "2"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), "second \x00binary\n"; got != want {
		t.Errorf("logs --attempt 2 = %q; want %q", got, want)
	}
	if err := e.run(t, "logs", "31337"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("logs of an unknown job: %v; want not found", err)
	}
	if err := e.run(t, "logs", fmt.Sprint(j.ID), "--attempt", "-1"); !errors.As(err, new(*UsageError)) {
		t.Errorf("--attempt -1: %v; want a UsageError", err)
	}
}

func TestLogsFollow(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning)
	e.appendLog(t, j.ID, 1, "one\n")
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- logsRun(context.Background(), &LogsOptions{
			IO: &IOStreams{Out: out, ErrOut: out}, Store: e.f.Store, ID: j.ID, Follow: true, Interval: 10 * time.Millisecond,
		})
	}()
	waitFor(t, "the first chunk", func() bool { return out.String() == "one\n" })
	e.appendLog(t, j.ID, 1, "two\n")
	waitFor(t, "the second chunk", func() bool { return out.String() == "one\ntwo\n" })
	// Output stored just before the job ends still gets printed.
	e.appendLog(t, j.ID, 1, "three\n")
	e.move(t, j, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\nthree\n" {
		t.Errorf("followed log %q; want every chunk once", got)
	}
	if strings.Count(out.String(), "three") != 1 {
		t.Error("a chunk was printed twice")
	}
}

func TestLogsOfAnAttemptNotMadeIsNotFound(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	err := e.run(t, "logs", fmt.Sprint(j.ID), "--attempt", "2")
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("logs --attempt 2 of a job that ran once: %v; want not found", err)
	}
}

package commands

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/spf13/cobra"
)

// fixedClock is a clock stopped at one instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// testNow is the instant tests' clocks show.
var testNow = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

// testEnv is a factory on buffers and a fresh, migrated SQLite database.
type testEnv struct {
	f              *Factory
	store          engine.Store
	stdout, stderr *bytes.Buffer
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	ios, stdout, stderr := TestIO("")
	f := NewFactory(ios)
	f.Clock = fixedClock(testNow)
	dsn := sqlitetest.DSN(t)
	f.DSN = func() string { return dsn }
	t.Cleanup(func() { _ = f.Close() })
	store, err := f.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{f: f, store: store, stdout: stdout, stderr: stderr}
}

// run executes one jobctl command line on the environment, with fresh
// output buffers.
func (e *testEnv) run(t *testing.T, args ...string) error {
	t.Helper()
	e.stdout.Reset()
	e.stderr.Reset()
	root := NewRootCmd(e.f, "1.2.3")
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}

// insert creates a job directly in the store.
func (e *testEnv) insert(t *testing.T, p engine.JobInsertParams) *engine.Job {
	t.Helper()
	if p.Type == "" {
		p.Type = engine.TypeNoop
	}
	if p.Status == "" {
		p.Status = engine.StatusQueued
	}
	if p.Load == 0 {
		p.Load = 1
	}
	j, err := e.store.JobInsert(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// move drives a job through the state machine the way a dispatcher and a
// node would, and returns it as it ends up.
func (e *testEnv) move(t *testing.T, j *engine.Job, path ...engine.Status) *engine.Job {
	t.Helper()
	for _, to := range path {
		u := engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}
		switch to {
		case engine.StatusRunning:
			u.MarkStarted = true
			if j.Status.Dispatchable() { // a start from the queue: a new attempt on n1
				u.IncrementAttempt, u.Node = true, engine.Ptr("n1")
			}
		case engine.StatusFinished, engine.StatusFailed, engine.StatusWarning:
			u.MarkFinished = true
			u.ExitCode = engine.Ptr(0)
			if to == engine.StatusFailed {
				u.ExitCode = engine.Ptr(3)
			}
		}
		var err error
		if j, err = e.store.JobUpdate(context.Background(), u); err != nil {
			t.Fatalf("moving job %d to %s: %v", j.ID, to, err)
		}
	}
	return j
}

func (e *testEnv) get(t *testing.T, id int64) *engine.Job {
	t.Helper()
	j, err := e.store.JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// execParse runs a command built with an injected runF on args, with the
// flag-error wrapping the root command gives it.
func execParse(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: err, Command: c.CommandPath()}
	})
	return cmd.Execute()
}

package commands

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/workflow"
)

const testWorkflow = `name: nightly
operations:
  - name: dump
    args: [pg_dump, -f, /tmp/x]
  - name: migrate
    type: noop
    on_failure: continue
`

func TestWorkflowStartParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(path, []byte(testWorkflow), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{path}, {"-"}} {
		ios, _, _ := TestIO(testWorkflow)
		var got *WorkflowStartOptions
		cmd := NewCmdWorkflowStart(&Factory{IO: ios}, func(_ context.Context, o *WorkflowStartOptions) error { got = o; return nil })
		if err := execParse(cmd, args...); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Name != "nightly" || len(got.Spec.Operations) != 2 || got.Spec.Operations[0].Type != engine.TypeExec ||
			got.Spec.Operations[1].OnFailure != workflow.OnFailureContinue {
			t.Errorf("%v: spec %+v", args, got.Spec)
		}
	}
}

func TestWorkflowStartRefusesAndCreatesNothing(t *testing.T) {
	e := newTestEnv(t)
	for _, c := range []struct{ text, want string }{
		{"name: x\n", "no operations"},
		{"operations:\n  - type: noop\n    on_failure: maybe\n", `on_failure "maybe" is neither stop nor continue`},
		{"operations:\n  - type: 'no good'\n", `type "no good" is not a job type name`},
		{"operations:\n  - type: noop\n    load: -2\n", "load -2 is not a number >= 0"},
		{"operations:\n  - type: noop\n    lod: 2\n", "stdin: invalid workflow: line 3: unknown field lod"},
	} {
		e.f.IO.In = strings.NewReader(c.text)
		err := e.run(t, "workflow", "start", "-")
		if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", c.text, err, c.want)
		}
	}
	// A file that cannot be read is a usage error (exit 2), as a bad one is.
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	var usage *UsageError
	if err := e.run(t, "workflow", "start", missing); !errors.As(err, &usage) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v; want a usage error naming it", err)
	}
	jobs, err := e.store.JobList(context.Background(), engine.JobListParams{})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("%d jobs were created (%v)", len(jobs), err)
	}
}

func TestWorkflowCommands(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	e.f.IO.In = strings.NewReader(testWorkflow)
	if err := e.run(t, "workflow", "start", "-"); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(e.stdout.String())
	if id != "1" {
		t.Fatalf("start printed %q, want the id", id)
	}
	if !strings.Contains(e.stderr.String(), "no registered node offers type exec: operation 1 'dump' will wait") {
		t.Errorf("stderr %q", e.stderr.String())
	}
	// A node runs the first step.
	root, err := e.store.JobUpdate(ctx, engine.JobUpdate{ID: 1, From: engine.StatusQueued, Version: 1, To: engine.StatusRunning,
		Node: engine.Ptr("n1"), IncrementAttempt: true, MarkStarted: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.RunStep(ctx, e.store, 1, root.Attempt); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.JobUpdate(ctx, engine.JobUpdate{ID: 1, From: engine.StatusRunning, Version: root.Version,
		To: engine.StatusFinished, MarkFinished: true}); err != nil {
		t.Fatal(err)
	}

	if err := e.run(t, "workflow", "show", id, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var v workflow.View
	if err := json.Unmarshal(e.stdout.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.ID != 1 || v.Name != "nightly" || v.State != engine.StatusRunning || v.Total != 2 || v.Current != 1 ||
		len(v.Operations) != 2 || v.Operations[0].JobID == nil || *v.Operations[0].JobID != 2 ||
		v.Operations[0].Status != engine.StatusQueued || v.Operations[1].JobID != nil || len(v.Steps) != 2 {
		t.Fatalf("show -o json: %s", e.stdout)
	}

	if err := e.run(t, "workflow", "show", id); err != nil {
		t.Fatal(err)
	}
	out := e.stdout.String()
	for _, want := range []string{"workflow\t1\n", "state\tRUNNING\n", "reason\toperation 1 'dump' is QUEUED (job 2)\n",
		"op\t1\tdump\texec\tstop\t2\tQUEUED\t0\t", "op\t2\tmigrate\tnoop\tcontinue\t\t\t\t", "step\t0\t1\tFINISHED\t", "step\t1\t3\tQUEUED\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if err := e.run(t, "workflow", "show", id, "-q"); err != nil || e.stdout.String() != "2\n" {
		t.Errorf("show -q: %q %v", e.stdout, err)
	}

	if err := e.run(t, "workflow", "list"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); !strings.HasPrefix(got, "1\tnightly\tRUNNING\t0/2\t1 dump\t") {
		t.Errorf("list: %q", got)
	}
	if err := e.run(t, "workflow", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var vs []workflow.View
	if err := json.Unmarshal(e.stdout.Bytes(), &vs); err != nil || len(vs) != 1 || vs[0].ID != 1 {
		t.Errorf("list -o json: %s %v", e.stdout, err)
	}

	if err := e.run(t, "workflow", "cancel", id); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != "3\n2\n" {
		t.Errorf("cancel printed %q, want the step then the operation", got)
	}
	if err := e.run(t, "workflow", "show", id, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &v); err != nil || v.State != engine.StatusCancelled {
		t.Errorf("after cancel: %s", e.stdout)
	}

	// The step job is a job of the workflow, not a workflow.
	for _, args := range [][]string{{"workflow", "show", "2"}, {"workflow", "show", "99"}, {"workflow", "cancel", "99"}} {
		if err := e.run(t, args...); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%v: %v, want not found", args, err)
		}
	}
	var usage *UsageError
	for _, args := range [][]string{{"workflow", "show", "x"}, {"workflow", "list", "--limit", "-1"},
		{"workflow", "show", "1", "-q", "-o", "json"}, {"workflow", "start"}} {
		if err := e.run(t, args...); !errors.As(err, &usage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

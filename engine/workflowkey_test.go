package engine

import (
	"testing"
	"time"
)

func TestWorkflowKeyRoot(t *testing.T) {
	if id, ok := WorkflowKeyRoot(WorkflowKey(42)); !ok || id != 42 {
		t.Fatalf("round trip: %d %v", id, ok)
	}
	for _, k := range []string{"", "workflow:", "workflow:x", "workflow:-1", "workflow:007", "backup"} {
		if _, ok := WorkflowKeyRoot(k); ok {
			t.Errorf("%q read as a workflow key", k)
		}
	}
}

func TestHoldReasonNamesTheWorkflow(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	step := &Job{ID: 12, Type: TypeWorkflow, Status: StatusQueued, Key: WorkflowKey(10)}
	op := &Job{ID: 11, Type: TypeExec, Status: StatusRunning, Key: WorkflowKey(10), Node: "a"}
	if got, want := DispatchHold(step, now, []*Job{op, step}).Reason(now), "waiting for operation 11 of workflow 10 to end (RUNNING)"; got != want {
		t.Errorf("step: %q, want %q", got, want)
	}
	next := &Job{ID: 13, Type: TypeExec, Status: StatusQueued, Key: WorkflowKey(10)}
	step.Status, step.Node = StatusRunning, "a"
	op.Status = StatusFinished
	if got, want := DispatchHold(next, now, []*Job{op, step, next}).Reason(now), "waiting for step 12 of workflow 10 to end (RUNNING)"; got != want {
		t.Errorf("operation: %q, want %q", got, want)
	}
	other := &Job{ID: 5, Status: StatusQueued, Key: "backup"}
	first := &Job{ID: 4, Status: StatusRunning, Key: "backup", Node: "a"}
	if got, want := DispatchHold(other, now, []*Job{first}).Reason(now), `waiting behind job 4 of key "backup" (RUNNING)`; got != want {
		t.Errorf("other key: %q, want %q", got, want)
	}
}

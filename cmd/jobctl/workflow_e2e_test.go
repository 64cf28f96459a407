package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type workflowOpView struct {
	Name   string `json:"name"`
	JobID  *int64 `json:"job_id"`
	Status string `json:"status"`
	Node   string `json:"node"`
}

type workflowView struct {
	ID         int64            `json:"id"`
	State      string           `json:"state"`
	Reason     string           `json:"reason"`
	Operations []workflowOpView `json:"operations"`
	Steps      []struct {
		Step   int    `json:"step"`
		JobID  int64  `json:"job_id"`
		Status string `json:"status"`
	} `json:"steps"`
}

func (c *cluster) workflow(id string) workflowView {
	c.t.Helper()
	var v workflowView
	if err := json.Unmarshal([]byte(c.ok("workflow", "show", id, "-o", "json")), &v); err != nil {
		c.t.Fatalf("workflow show: %v", err)
	}
	return v
}

// startWorkflow writes a workflow of three exec operations, the first
// waiting for gate and the second failing, and starts it.
func (c *cluster) startWorkflow(g gate, onFailure string) string {
	c.t.Helper()
	path := filepath.Join(c.t.TempDir(), "wf.yaml")
	text := fmt.Sprintf(`name: e2e
operations:
  - name: first
    args: [sh, -c, %q]
  - name: second
    args: [sh, -c, "exit 3"]
    on_failure: %s
  - name: third
    args: ["true"]
`, g.script(), onFailure)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return jobID(c.ok("workflow", "start", path))
}

// runWorkflow starts the workflow on two nodes, checks what explain says
// of the step that waits for the first operation, and returns the
// workflow once it has ended.
func runWorkflow(t *testing.T, c *cluster, onFailure string) workflowView {
	c.serve("a", "--exec")
	c.serve("b", "--exec")
	g := newGate(t)
	id := c.startWorkflow(g, onFailure)

	var v workflowView
	c.eventually(60*time.Second, "the first operation running", func() bool {
		v = c.workflow(id)
		return v.Operations[0].Status == "RUNNING" && len(v.Steps) == 2
	})
	if v.State != "RUNNING" || v.Operations[1].JobID != nil {
		t.Fatalf("while the first operation runs: %+v", v)
	}
	var e struct {
		Dispatchable bool   `json:"dispatchable"`
		HoldReason   string `json:"hold_reason"`
	}
	step := fmt.Sprint(v.Steps[1].JobID)
	if err := json.Unmarshal([]byte(c.ok("explain", step, "-o", "json")), &e); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("waiting for operation %d of workflow %s to end (RUNNING)", *v.Operations[0].JobID, id)
	if e.Dispatchable || e.HoldReason != want {
		t.Errorf("explain %s: %+v, want %q", step, e, want)
	}
	g.open(t)
	c.eventually(60*time.Second, "the workflow to end", func() bool {
		v = c.workflow(id)
		return v.State != "RUNNING"
	})
	return v
}

// A failing operation with on_failure stop (on SQLite) ends the workflow FAILED: the
// operation after it is never created.
func TestWorkflowStopsAtAFailedOperation(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	v := runWorkflow(t, c, "stop")
	ops := v.Operations
	if ops[0].Status != "FINISHED" || ops[1].Status != "FAILED" || ops[2].JobID != nil || ops[2].Status != "" {
		t.Errorf("operations %+v", ops)
	}
	if want := "operation 2 'second' ended FAILED; the workflow stops"; v.State != "FAILED" || v.Reason != want {
		t.Errorf("workflow %s %q, want FAILED %q", v.State, v.Reason, want)
	}
	if len(v.Steps) != 3 || v.Steps[2].Status != "FAILED" {
		t.Fatalf("steps %+v", v.Steps)
	}
	// Stopping is a verdict, not a failure another attempt could mend.
	var step struct {
		Attempt int `json:"attempt"`
	}
	if err := json.Unmarshal([]byte(c.ok("show", fmt.Sprint(v.Steps[2].JobID), "-o", "json")), &step); err != nil || step.Attempt != 1 {
		t.Errorf("the step that stopped the workflow made attempt %d (%v), want it to end at its first", step.Attempt, err)
	}
}

// With on_failure continue (on PostgreSQL) the third operation runs after the failed
// second, and the workflow ends WARNING naming the failed operation.
func TestWorkflowGoesOnPastAFailedOperation(t *testing.T) {
	t.Parallel()
	v := runWorkflow(t, postgresCluster(t), "continue")
	ops := v.Operations
	if ops[0].Status != "FINISHED" || ops[1].Status != "FAILED" || ops[2].Status != "FINISHED" {
		t.Errorf("operations %+v", ops)
	}
	if v.State != "WARNING" || !strings.Contains(v.Reason, "operation 2 'second' (FAILED)") {
		t.Errorf("workflow %s %q, want WARNING naming operation 2", v.State, v.Reason)
	}
	if len(v.Steps) != 4 || v.Steps[3].Status != "WARNING" {
		t.Errorf("steps %+v", v.Steps)
	}
}

// Cancelling a workflow while an operation runs stops it on its node and
// cancels the step waiting for it; nothing more is created.
func TestWorkflowCancelStopsTheRunningOperation(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("a", "--exec")
	id := c.startWorkflow(newGate(t), "stop") // the gate is never opened
	c.eventually(60*time.Second, "the first operation running", func() bool {
		return c.workflow(id).Operations[0].Status == "RUNNING"
	})
	c.ok("workflow", "cancel", id)
	var v workflowView
	c.eventually(60*time.Second, "the workflow cancelled", func() bool {
		v = c.workflow(id)
		return v.State == "CANCELLED"
	})
	if v.Operations[0].Status != "CANCELLED" || v.Operations[1].JobID != nil || v.Steps[1].Status != "CANCELLED" {
		t.Errorf("after cancel: %+v", v)
	}
	if r := c.run("workflow", "cancel", "99"); r.code != 3 {
		t.Errorf("cancel of no workflow: exit %d, want 3 (%s)", r.code, r.stderr)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("name: bad\noperations:\n  - args: [true]\n    on_falure: stop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.run("workflow", "start", path)
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "line 4: unknown field on_falure") {
		t.Errorf("bad file: exit %d, stderr %q", r.code, r.stderr)
	}
	t.Logf("bad file: %s", r.stderr)
}

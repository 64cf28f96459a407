package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestSubmitRollbackFlags(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	var got *SubmitOptions
	cmd := NewCmdSubmit(f, func(_ context.Context, o *SubmitOptions) error { got = o; return nil })
	if err := execParse(cmd, "--rollback", `undo --to "last good"`, "--rollback-type", " cleanup ", "--", "deploy"); err != nil {
		t.Fatal(err)
	}
	if got.Rollback != `undo --to "last good"` || got.RollbackType != "cleanup" {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{
		{"--rollback", "undo 'unbalanced", "--", "x"},
		{"--rollback", "undo; rm -rf /", "--", "x"},
		{"--rollback", "  ", "--", "x"},
		{"--rollback-type", "cleanup", "--", "x"},
		{"--rollback", "undo", "--rollback-type", "", "--", "x"},
		{"--rollback", "undo", "--rollback-type", "a\nb", "--", "x"},
	} {
		cmd := NewCmdSubmit(f, func(context.Context, *SubmitOptions) error { return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("submit %q: %v; want a UsageError", args, err)
		}
	}
}

func TestSubmitBatchRollback(t *testing.T) {
	e := newTestEnv(t)
	path := t.TempDir() + "/jobs.jsonl"
	lines := `{"args":["deploy"],"rollback":"undo 'it'","rollback_type":"cleanup"}` + "\n" + `{"args":["deploy"]}` + "\n"
	if err := writeFile(path, lines); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--batch", path, "--rollback", "fallback"); err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(e.stdout.String())
	if len(ids) != 2 {
		t.Fatalf("batch printed %q", ids)
	}
	var first, second int64
	if _, err := fmt.Sscan(ids[0]+" "+ids[1], &first, &second); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, first); j.Rollback != "undo 'it'" || j.RollbackType != "cleanup" {
		t.Errorf("line 1: rollback %q type %q", j.Rollback, j.RollbackType)
	}
	if j := e.get(t, second); j.Rollback != "fallback" || j.RollbackType != "" {
		t.Errorf("line 2: rollback %q type %q", j.Rollback, j.RollbackType)
	}
	bad := t.TempDir() + "/bad.jsonl"
	if err := writeFile(bad, `{"args":["x"],"rollback":"undo 'open"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--batch", bad); !errors.As(err, new(*UsageError)) {
		t.Errorf("a batch line with a rollback that does not split: %v, want a usage error", err)
	}
}

// The explain and show of a job whose failed predecessor in its key awaits
// its rollback job, and of that job once its rollback failed too.
func TestExplainAndShowRollback(t *testing.T) {
	e := newTestEnv(t)
	e.node(t, "n1", 4, func(n *engine.Node) { n.Services = append(n.Services, engine.NodeService{Type: engine.TypeNoop}) })
	failed := e.insert(t, engine.JobInsertParams{Key: "web", Rollback: "undo"})
	next := e.insert(t, engine.JobInsertParams{Key: "web"})
	failed = e.move(t, failed, engine.StatusRunning, engine.StatusFailed)
	if err := e.run(t, "explain", fmt.Sprint(next.ID)); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`waiting for the rollback of job %d of key "web"`, failed.ID); !strings.Contains(e.stdout.String(), want) {
		t.Errorf("explain does not say %q:\n%s", want, e.stdout.String())
	}
	if err := e.run(t, "show", fmt.Sprint(failed.ID)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.stdout.String(), "rollback\tpending") {
		t.Errorf("show of a job awaiting its rollback:\n%s", e.stdout.String())
	}

	made, err := engine.SpawnRollbacks(context.Background(), e.store)
	if err != nil || len(made) != 1 {
		t.Fatalf("SpawnRollbacks = %v, %v", made, err)
	}
	if err := e.run(t, "explain", fmt.Sprint(next.ID)); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`waiting behind job %d of key "web"`, made[0].ID); !strings.Contains(e.stdout.String(), want) {
		t.Errorf("explain does not say %q:\n%s", want, e.stdout.String())
	}
	e.move(t, made[0], engine.StatusRunning, engine.StatusFailed)

	if err := e.run(t, "show", fmt.Sprint(failed.ID)); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("rollback\tjob %d FAILED: double fault", made[0].ID); !strings.Contains(e.stdout.String(), want) {
		t.Errorf("show does not say %q:\n%s", want, e.stdout.String())
	}
	if err := e.run(t, "show", fmt.Sprint(failed.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Rollback      string `json:"rollback"`
		RollbackType  string `json:"rollback_type"`
		RollbackJobID *int64 `json:"rollback_job_id"`
		RollbackOf    *int64 `json:"rollback_of"`
		DoubleFault   bool   `json:"double_fault"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Rollback != "undo" || v.RollbackJobID == nil || *v.RollbackJobID != made[0].ID || v.RollbackOf != nil || !v.DoubleFault {
		t.Errorf("show -o json: %+v", v)
	}
	if err := e.run(t, "list", "--double-fault", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		ID          int64 `json:"id"`
		DoubleFault bool  `json:"double_fault"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &listed); err != nil || len(listed) != 1 || listed[0].ID != failed.ID || !listed[0].DoubleFault {
		t.Errorf("list --double-fault -o json: %+v, %v", listed, err)
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

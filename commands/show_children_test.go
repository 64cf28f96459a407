package commands

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestShowListsTheChildren(t *testing.T) {
	e := newTestEnv(t)
	parent := e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"true"}}),
		engine.StatusRunning, engine.StatusWaiting)
	done := e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode", ParentID: &parent.ID}),
		engine.StatusRunning, engine.StatusFinished)
	queued := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, ParentID: &parent.ID})
	e.insert(t, engine.JobInsertParams{ParentID: &done.ID}) // a grandchild: not the parent's child

	if err := e.run(t, "show", fmt.Sprint(parent.ID)); err != nil {
		t.Fatal(err)
	}
	out := e.stdout.String()
	if !strings.Contains(out, "status\tWAITING\n") || !strings.Contains(out, "children\t2 (1 ended)\n") {
		t.Errorf("show lacks the status or the children's count:\n%s", out)
	}
	if want := fmt.Sprintf("\n\n%d\tencode\tFINISHED\n%d\tsleep\tQUEUED\n", done.ID, queued.ID); !strings.HasSuffix(out, want) {
		t.Errorf("show ends\n%s\nwant it to end with the children:\n%s", out, want)
	}

	if err := e.run(t, "show", fmt.Sprint(parent.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID       int64 `json:"id"`
		Status   engine.Status
		Children []map[string]any `json:"children"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatalf("show -o json: %v\n%s", err, e.stdout.String())
	}
	if got.ID != parent.ID || got.Status != engine.StatusWaiting || len(got.Children) != 2 ||
		got.Children[0]["id"] != float64(done.ID) || got.Children[0]["type"] != "encode" || got.Children[0]["status"] != "FINISHED" ||
		got.Children[1]["id"] != float64(queued.ID) || got.Children[1]["status"] != "QUEUED" {
		t.Errorf("show -o json = %s", e.stdout.String())
	}

	// A job without children says nothing of them, and [] in JSON.
	if err := e.run(t, "show", fmt.Sprint(queued.ID)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.stdout.String(), "children") || strings.HasSuffix(e.stdout.String(), "\n\n") {
		t.Errorf("show of a job without children:\n%s", e.stdout.String())
	}
	if err := e.run(t, "show", fmt.Sprint(queued.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.stdout.String(), `"children": []`) {
		t.Errorf("show -o json of a job without children: %s", e.stdout.String())
	}
}

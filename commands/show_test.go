package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestShowJSONFields(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"true"}}),
		engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	if err := e.run(t, "show", fmt.Sprint(j.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatalf("show -o json: %v\n%s", err, e.stdout.String())
	}
	for _, field := range []string{"id", "type", "operation", "status", "load", "node", "key", "parent_id",
		"attempt", "max_attempts", "exit_code", "progress", "created_at", "started_at", "finished_at"} {
		if _, ok := got[field]; !ok {
			t.Errorf("show -o json lacks %q", field)
		}
	}
	if got["status"] != "FINISHED" || got["type"] != "exec" || got["exit_code"] != float64(0) || got["node"] != "n1" {
		t.Errorf("show -o json = %v", got)
	}
}

func TestShowPiped(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode", Operation: "scale",
		Args: []string{"in file.mp4", "-q"}, Key: "k", MaxAttempts: 3}),
		engine.StatusDispatching, engine.StatusRunning, engine.StatusFailed)
	if err := e.run(t, "show", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	nano := func(t *time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	want := fmt.Sprintf(`id	%d
status	FAILED
type	encode
operation	scale
args	"in file.mp4" -q
node	n1
load	1
priority	50
progress	0%%
attempt	1 of 3
exit code	3
key	k
timeout	8h0m0s
creator	
created	%s
queued	%s
started	%s
finished	%s

1	n1	%s	%s	3	FAILED	
`, j.ID, nano(&j.CreatedAt), nano(j.QueuedAt), nano(j.StartedAt), nano(j.FinishedAt), nano(j.StartedAt), nano(j.FinishedAt))
	if got := e.stdout.String(); got != want {
		t.Errorf("show:\n%s\nwant:\n%s", got, want)
	}
}

func TestShowQuietAndWide(t *testing.T) {
	e := newTestEnv(t)
	j := e.insert(t, engine.JobInsertParams{Payload: json.RawMessage(`{"a":1}`)})
	if err := e.run(t, "show", fmt.Sprint(j.ID), "-q"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != fmt.Sprintf("%d\n", j.ID) {
		t.Errorf("show -q = %q; want the id", got)
	}
	if err := e.run(t, "show", fmt.Sprint(j.ID), "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.stdout.String(), "payload\t{\"a\":1}\n") {
		t.Errorf("show -o wide lacks the payload:\n%s", e.stdout.String())
	}
}

func TestShowErrors(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "show", "987654321"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("show of an unknown id: %v; want not found", err)
	}
	for _, args := range [][]string{{"show"}, {"show", "x"}, {"show", "-3"}, {"show", "1", "2"}} {
		if err := e.run(t, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("%v: %v; want a UsageError", args, err)
		}
	}
}

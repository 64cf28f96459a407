package commands

import (
	"context"
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
		engine.StatusRunning, engine.StatusFinished)
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
		engine.StatusRunning, engine.StatusFailed)
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

// TestShowAndListWhatARunUsed: a job killed at its memory limit shows the
// limit, what its last run used and why it ended; list --oom finds it and
// -o wide shows its CPU, PEAK and WALL.
func TestShowAndListWhatARunUsed(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode", MemoryLimit: 64 << 20}), engine.StatusRunning)
	used := &engine.Usage{CPUSeconds: 3, PeakMemory: 64 << 20, WallSeconds: 2, OOMKilled: true}
	j, err := e.store.JobUpdate(context.Background(), engine.OutcomeUpdate(j, engine.RunResult{ExitCode: -1,
		Outcome: engine.RunFailed, Reason: engine.MessageOutOfMemory(64 << 20), Usage: used}, false, func() float64 { return 0.5 }))
	if err != nil {
		t.Fatal(err)
	}
	fine := e.runMeasured(t, "encode", 1, 1, 1, 1<<20, false)

	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "show", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	squeezed := strings.Join(strings.Fields(e.stdout.String()), " ")
	for _, want := range []string{
		"message: killed: out of memory, limit 64MiB ",
		"memory limit: 64MiB ",
		"last run used: CPU 3s (1.5 cores), peak memory 64MiB, wall 2s; killed at its memory limit ",
		" FAILED 3s 64MiB 2s killed: out of memory, limit 64MiB",
	} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("show lacks %q:\n%s", want, e.stdout.String())
		}
	}

	e.stdout.Reset()
	e.f.IO.OutIsTerminal = false
	if err := e.run(t, "list", "--oom", "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n")
	if len(rows) != 1 {
		t.Fatalf("list --oom:\n%s\nwant job %d alone (not %d)", e.stdout.String(), j.ID, fine.ID)
	}
	cells := strings.Split(rows[0], "\t")
	if cells[0] != fmt.Sprint(j.ID) || cells[15] != "3.000" || cells[16] != "67108864" || cells[17] != "2.000" ||
		cells[19] != "killed: out of memory, limit 64MiB" {
		t.Errorf("list --oom -o wide row %q: want CPU 3.000, PEAK 67108864, WALL 2.000 and the out-of-memory message", rows[0])
	}

	e.stdout.Reset()
	if err := e.run(t, "show", fmt.Sprint(j.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		MemoryLimit int64         `json:"memory_limit"`
		Usage       *engine.Usage `json:"usage"`
		Message     string        `json:"message"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.MemoryLimit != 64<<20 || got.Usage == nil || *got.Usage != *used {
		t.Errorf("show -o json: memory_limit %d, usage %+v; want %d and %+v", got.MemoryLimit, got.Usage, 64<<20, *used)
	}
}

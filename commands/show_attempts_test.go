package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// attemptsJob makes a job with three attempts: one that failed and was
// retried on n1, measured, one cut short on n2 when that node was lost, and
// one running on n1 now, which n1 last reported using 12 CPU seconds and
// holding 64 MiB.
func attemptsJob(t *testing.T, e *testEnv) *engine.Job {
	t.Helper()
	ctx := context.Background()
	apply := func(u engine.JobUpdate) *engine.Job {
		t.Helper()
		j, err := e.store.JobUpdate(ctx, u)
		if err != nil {
			t.Fatalf("JobUpdate(%+v): %v", u, err)
		}
		return j
	}
	start := func(j *engine.Job, node string) *engine.Job {
		t.Helper()
		return apply(engine.QueuedStartUpdate(j, node))
	}
	j := e.insert(t, engine.JobInsertParams{MaxAttempts: 3})
	j = start(j, "n1")
	j = apply(engine.OutcomeUpdate(j, engine.RunResult{ExitCode: 1, Outcome: engine.RunFailed, Reason: "exit code 1",
		Usage: &engine.Usage{CPUSeconds: 2.5, PeakMemory: 200 << 20, WallSeconds: 5}}, false, func() float64 { return 0.5 }))
	j = start(j, "n2")
	j = apply(engine.RecoverUpdate(j, "node n2 was silent for 31s, past its node lease"))
	j = start(j, "n1")
	n1 := engine.Node{Name: "n1", URL: "http://n1:7420", MaxLoad: 4, MaxJobs: 200, Weight: 100}
	if _, err := engine.RegisterNode(ctx, e.store, engine.NodeRegisterParams{Node: n1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.NodeTouch(ctx, engine.NodeTouchParams{Name: "n1", RunningUsage: []engine.LiveUsage{
		{JobID: j.ID, Attempt: 3, CPUSeconds: 12, Cores: 1.5, Memory: 64 << 20},
		{JobID: j.ID, Attempt: 2, CPUSeconds: 99}, // stale: not the attempt running
	}}); err != nil {
		t.Fatal(err)
	}
	return j
}

func TestShowAttemptsJSON(t *testing.T) {
	e := newTestEnv(t)
	j := attemptsJob(t, e)
	if err := e.run(t, "show", fmt.Sprint(j.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status   string           `json:"status"`
		Attempts []map[string]any `json:"attempts"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatalf("show -o json: %v\n%s", err, e.stdout.String())
	}
	if got.Status != "RUNNING" || len(got.Attempts) != 3 {
		t.Fatalf("show -o json: status %s with %d attempts, want RUNNING with 3:\n%s", got.Status, len(got.Attempts), e.stdout.String())
	}
	want := []map[string]any{
		{"attempt": 1.0, "node": "n1", "exit_code": 1.0, "ending": "RESTART", "message": "exit code 1; retrying in 0s"},
		{"attempt": 2.0, "node": "n2", "exit_code": nil, "ending": "RESTART", "message": "node n2 was silent for 31s, past its node lease"},
		{"attempt": 3.0, "node": "n1", "exit_code": nil, "ending": "", "message": "", "ended_at": nil},
	}
	wantUsage := []any{
		map[string]any{"cpu_seconds": 2.5, "peak_memory_bytes": float64(200 << 20), "wall_seconds": 5.0, "oom_killed": false},
		nil, nil,
	}
	for i, a := range got.Attempts {
		if !reflect.DeepEqual(a["usage"], wantUsage[i]) {
			t.Errorf("attempt %d: usage %#v, want %#v", i+1, a["usage"], wantUsage[i])
		}
		live, isLive := a["live"].(map[string]any)
		if (i == 2) != isLive || (isLive && (live["cpu_seconds"] != 12.0 || live["memory_bytes"] != float64(64<<20) || live["cores"] != 1.5)) {
			t.Errorf("attempt %d: live %#v; want only the running one's, as its node reported it", i+1, a["live"])
		}
		for _, field := range []string{"attempt", "node", "started_at", "ended_at", "exit_code", "ending", "message", "usage"} {
			if _, ok := a[field]; !ok {
				t.Errorf("attempt %d lacks %q: %v", i+1, field, a)
			}
		}
		for k, v := range want[i] {
			if a[k] != v {
				t.Errorf("attempt %d: %s = %#v, want %#v", i+1, k, a[k], v)
			}
		}
		if i < 2 {
			started, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(a["started_at"]))
			ended, err := time.Parse(time.RFC3339Nano, fmt.Sprint(a["ended_at"]))
			if err != nil || ended.Before(started) {
				t.Errorf("attempt %d ended at %v, before its start %v or unreadable (%v)", i+1, a["ended_at"], a["started_at"], err)
			}
		}
	}
}

func TestShowAttemptsTable(t *testing.T) {
	e := newTestEnv(t)
	j := attemptsJob(t, e)
	e.f.Clock = fixedClock(j.StartedAt.Add(90 * time.Second))

	// Piped: a blank line, then one tab-separated row per attempt.
	if err := e.run(t, "show", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	_, rows, ok := strings.Cut(e.stdout.String(), "\n\n")
	if !ok {
		t.Fatalf("show has no attempts after a blank line:\n%s", e.stdout.String())
	}
	lines := strings.Split(strings.TrimSuffix(rows, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("show lists %d attempts, want 3:\n%s", len(lines), rows)
	}
	// CPU, PEAK and WALL in plain seconds and bytes; the running attempt's
	// as its node last reported them (memory now), its time so far.
	wantCells := [][]string{
		{"1", "n1", "", "", "1", "RESTART", "2.500", "209715200", "5.000", "exit code 1; retrying in 0s"},
		{"2", "n2", "", "", "", "RESTART", "", "", "", "node n2 was silent for 31s, past its node lease"},
		{"3", "n1", j.StartedAt.UTC().Format(time.RFC3339Nano), "", "", "RUNNING", "12.000", "67108864", "90.000", ""},
	}
	for i, line := range lines {
		cells := strings.Split(line, "\t")
		if len(cells) != 10 {
			t.Errorf("attempt row %q has %d cells, want 10", line, len(cells))
			continue
		}
		for c := 6; c < 9; c++ {
			if cells[c] != wantCells[i][c] {
				t.Errorf("attempt row %d cell %d = %q, want %q", i+1, c, cells[c], wantCells[i][c])
			}
		}
		for c, want := range wantCells[i] {
			if want != "" && cells[c] != want {
				t.Errorf("attempt row %d cell %d = %q, want %q", i+1, c, cells[c], want)
			}
		}
		if i < 2 && (cells[2] == "" || cells[3] == "") {
			t.Errorf("ended attempt row %q lacks its start or end", line)
		}
	}

	// On a terminal: a header and ages.
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "show", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	out := e.stdout.String()
	for _, want := range []string{
		"\nATTEMPT  NODE  STARTED    ENDED      EXIT  ENDING   CPU   PEAK    WALL   MESSAGE\n",
		"\n1        n1    1m30s ago  1m30s ago  1     RESTART  2.5s  200MiB  5s     exit code 1; retrying in 0s\n",
		"\n2        n2    1m30s ago  1m30s ago  -     RESTART  -     -       -      node n2 was silent for 31s, past its node lease\n",
		"\n3        n1    1m30s ago  -          -     RUNNING  12s   64MiB   1m30s  -\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show on a terminal lacks %q:\n%s", want, out)
		}
	}
}

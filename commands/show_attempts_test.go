package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// attemptsJob makes a job with three attempts: one that failed and was
// retried on n1, one cut short on n2 when that node was lost, and one
// running on n1 now.
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
		return apply(engine.StartUpdate(apply(engine.DispatchUpdate(j, node))))
	}
	j := e.insert(t, engine.JobInsertParams{MaxAttempts: 3})
	j = start(j, "n1")
	j = apply(engine.OutcomeUpdate(j, engine.RunResult{ExitCode: 1, Outcome: engine.RunFailed, Reason: "exit code 1"},
		false, func() float64 { return 0.5 }))
	j = start(j, "n2")
	j = apply(engine.RecoverUpdate(j, "node n2 was silent for 31s, past its node lease"))
	return start(j, "n1")
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
	for i, a := range got.Attempts {
		for _, field := range []string{"attempt", "node", "started_at", "ended_at", "exit_code", "ending", "message"} {
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
	wantCells := [][]string{
		{"1", "n1", "", "", "1", "RESTART", "exit code 1; retrying in 0s"},
		{"2", "n2", "", "", "", "RESTART", "node n2 was silent for 31s, past its node lease"},
		{"3", "n1", j.StartedAt.UTC().Format(time.RFC3339Nano), "", "", "RUNNING", ""},
	}
	for i, line := range lines {
		cells := strings.Split(line, "\t")
		if len(cells) != 7 {
			t.Errorf("attempt row %q has %d cells, want 7", line, len(cells))
			continue
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
		"\nATTEMPT  NODE  STARTED    ENDED      EXIT  ENDING   MESSAGE\n",
		"\n2        n2    1m30s ago  1m30s ago  -     RESTART  node n2 was silent for 31s, past its node lease\n",
		"\n3        n1    1m30s ago  -          -     RUNNING  -\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show on a terminal lacks %q:\n%s", want, out)
		}
	}
}

package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// parseSubmit runs `jobctl submit args…` up to its action and returns the
// parsed options.
func parseSubmit(t *testing.T, stdin string, args ...string) (*SubmitOptions, error) {
	t.Helper()
	ios, _, _ := TestIO(stdin)
	var got *SubmitOptions
	cmd := NewCmdSubmit(&Factory{IO: ios}, func(_ context.Context, o *SubmitOptions) error {
		got = o
		return nil
	})
	err := execParse(cmd, args...)
	return got, err
}

func TestSubmitParsing(t *testing.T) {
	t.Setenv("USER", "ada")
	host, _ := os.Hostname()

	o, err := parseSubmit(t, "", "--", "echo", "-n", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if o.Type != engine.TypeExec || strings.Join(o.Args, " ") != "echo -n hi" {
		t.Errorf("ARGS alone: type %q args %q; want exec [echo -n hi]", o.Type, o.Args)
	}
	if o.Load != nil || o.Timeout != nil || o.MaxAttempts != 1 || o.Hold || o.Wait {
		t.Errorf("defaults: %+v", o)
	}
	if o.Creator != "ada@"+host {
		t.Errorf("creator %q; want ada@%s", o.Creator, host)
	}

	o, err = parseSubmit(t, "", "--type", "encode", "--operation", "transcode", "--load", "2.5",
		"--key", "k1", "--parent", "9", "--max-attempts", "3", "--backoff", "1m",
		"--timeout", "90s", "--at", "2030-05-06T07:08:09Z", "--hold")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	switch {
	case o.Type != "encode", o.Operation != "transcode", len(o.Args) != 0:
		t.Errorf("type/operation/args: %q %q %q", o.Type, o.Operation, o.Args)
	case o.Load == nil || *o.Load != 2.5:
		t.Errorf("load %v; want 2.5", o.Load)
	case o.Key != "k1", o.ParentID == nil || *o.ParentID != 9, o.MaxAttempts != 3:
		t.Errorf("key/parent/attempts: %q %v %d", o.Key, o.ParentID, o.MaxAttempts)
	case o.Backoff != time.Minute, o.Timeout == nil || *o.Timeout != 90*time.Second:
		t.Errorf("backoff/timeout: %s %v", o.Backoff, o.Timeout)
	case o.At == nil || !o.At.Equal(at), o.In != nil, !o.Hold:
		t.Errorf("at/in/hold: %v %v %v", o.At, o.In, o.Hold)
	}

	o, err = parseSubmit(t, "", "--type", "noop", "--in", "5m", "--wait", "--wait-timeout", "1m")
	if err != nil {
		t.Fatal(err)
	}
	if o.In == nil || *o.In != 5*time.Minute || !o.Wait || o.WaitTimeout != time.Minute {
		t.Errorf("in/wait: %v %v %s", o.In, o.Wait, o.WaitTimeout)
	}
}

func TestSubmitPayload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(file, []byte(`{"from":"file"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		arg, stdin, want string
	}{
		{`{"a":1}`, "", `{"a":1}`},
		{"@" + file, "", `{"from":"file"}`},
		{"-", `["stdin"]`, `["stdin"]`},
	}
	for _, c := range cases {
		o, err := parseSubmit(t, c.stdin, "--type", "noop", "--payload", c.arg)
		if err != nil {
			t.Errorf("--payload %s: %v", c.arg, err)
			continue
		}
		if string(o.Payload) != c.want {
			t.Errorf("--payload %s = %s; want %s", c.arg, o.Payload, c.want)
		}
	}
}

func TestSubmitUsageErrors(t *testing.T) {
	cases := map[string][]string{
		"nothing to run":     {},
		"exec without ARGS":  {"--type", "exec"},
		"load not a number":  {"--load", "nope", "--", "true"},
		"load NaN":           {"--load", "NaN", "--", "true"},
		"load Inf":           {"--load", "+Inf", "--", "true"},
		"load negative":      {"--load", "-1", "--", "true"},
		"load empty":         {"--load", "", "--", "true"},
		"zero attempts":      {"--max-attempts", "0", "--", "true"},
		"negative backoff":   {"--backoff", "-1s", "--", "true"},
		"zero timeout":       {"--timeout", "0s", "--", "true"},
		"bad timeout":        {"--timeout", "soon", "--", "true"},
		"at and in":          {"--at", "2030-01-01T00:00:00Z", "--in", "1m", "--", "true"},
		"at not RFC 3339":    {"--at", "tomorrow", "--", "true"},
		"negative in":        {"--in", "-1m", "--", "true"},
		"hold and wait":      {"--hold", "--wait", "--", "true"},
		"wait-timeout alone": {"--wait-timeout", "1m", "--", "true"},
		"payload not JSON":   {"--payload", "{nope", "--", "true"},
		"payload file gone":  {"--payload", "@/nonexistent/p.json", "--", "true"},
		"parent zero":        {"--parent", "0", "--", "true"},
		"arg before dash":    {"echo", "--", "hi"},
		"unknown flag":       {"--colour", "--", "true"},
	}
	for name, args := range cases {
		o, err := parseSubmit(t, "", args...)
		var u *UsageError
		if !errors.As(err, &u) {
			t.Errorf("%s: error %v (options %+v); want a UsageError", name, err, o)
		}
	}
}

func TestSubmitRun(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "submit", "--", "sh", "-c", "exit 0"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(e.stdout.String()), "\n")
	id, err := strconv.ParseInt(lines[0], 10, 64)
	if err != nil || len(lines) != 1 {
		t.Fatalf("stdout %q; want the new id alone", e.stdout.String())
	}
	j := e.get(t, id)
	if j.Type != engine.TypeExec || strings.Join(j.Args, "|") != "sh|-c|exit 0" || j.Status != engine.StatusQueued {
		t.Errorf("job: type %q args %q status %s", j.Type, j.Args, j.Status)
	}
	if j.Load != 1 || time.Duration(j.Timeout) != engine.DefaultJobTimeout {
		t.Errorf("defaults without a node: load %v timeout %v; want 1 and %s", j.Load, time.Duration(j.Timeout), engine.DefaultJobTimeout)
	}
	if !strings.Contains(e.stderr.String(), `no registered node offers type "exec"`) {
		t.Errorf("stderr %q; want a warning that no node runs exec jobs", e.stderr.String())
	}
}

func TestSubmitTakesServiceDefaults(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	_, err := e.store.NodeRegister(ctx, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1", MaxLoad: 8, MaxJobs: 10, Weight: 100,
		Services: []engine.NodeService{{Type: "encode", Load: 3, Timeout: engine.Duration(time.Hour)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--type", "encode"); err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	j := e.get(t, id)
	if j.Load != 3 || time.Duration(j.Timeout) != time.Hour {
		t.Errorf("load %v timeout %s; want the service's 3 and 1h", j.Load, time.Duration(j.Timeout))
	}
	if e.stderr.Len() != 0 {
		t.Errorf("stderr %q; want no warning when a node offers the type", e.stderr.String())
	}

	// Flags win over the service's settings.
	if err := e.run(t, "submit", "--type", "encode", "--load", "0.5", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	id, _ = strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	j = e.get(t, id)
	if j.Load != 0.5 || time.Duration(j.Timeout) != 2*time.Minute {
		t.Errorf("load %v timeout %s; want 0.5 and 2m from the flags", j.Load, time.Duration(j.Timeout))
	}
}

func TestSubmitHoldPayloadParent(t *testing.T) {
	e := newTestEnv(t)
	parent := e.insert(t, engine.JobInsertParams{})
	err := e.run(t, "submit", "--type", "noop", "--hold", "--parent", strconv.FormatInt(parent.ID, 10),
		"--payload", `{"n": 1}`, "--key", "k", "--max-attempts", "2")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	j := e.get(t, id)
	if j.Status != engine.StatusInstantiated || j.ParentID == nil || *j.ParentID != parent.ID || j.Key != "k" || j.MaxAttempts != 2 {
		t.Errorf("job %+v; want held, child of %d, key k, 2 attempts", j, parent.ID)
	}
	var payload map[string]int
	if err := json.Unmarshal(j.Payload, &payload); err != nil || payload["n"] != 1 {
		t.Errorf("payload %s; want {\"n\": 1}", j.Payload)
	}
}

func TestSubmitUnknownParentChangesNothing(t *testing.T) {
	e := newTestEnv(t)
	err := e.run(t, "submit", "--parent", "777", "--", "true")
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("error %v; want not found", err)
	}
	jobs, err := e.store.JobList(context.Background(), engine.JobListParams{})
	if err != nil || len(jobs) != 0 {
		t.Errorf("jobs after a refused submit: %d, %v; want none", len(jobs), err)
	}
}

func TestSubmitInCountsFromDatabaseClock(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	before, err := e.store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--type", "noop", "--in", "1h"); err != nil {
		t.Fatal(err)
	}
	after, err := e.store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	j := e.get(t, id)
	// The test clock of the factory is years away; run_after must come
	// from the database clock, not from it.
	if j.RunAfter == nil || j.RunAfter.Before(before.Add(time.Hour)) || j.RunAfter.After(after.Add(time.Hour)) {
		t.Errorf("run_after %v; want an hour after the database's now (%v)", j.RunAfter, before)
	}
}

func TestSubmitWait(t *testing.T) {
	e := newTestEnv(t)
	// No node runs here: the job stays queued, so --wait-timeout ends it.
	err := e.run(t, "submit", "--type", "noop", "--wait", "--wait-timeout", "300ms")
	var timeout *WaitTimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("error %v; want a WaitTimeoutError", err)
	}
	id := strings.TrimSpace(e.stdout.String())
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		t.Errorf("stdout %q; want the id alone", e.stdout.String())
	}
	if !strings.Contains(e.stderr.String(), "\n"+id+"\tQUEUED\t") {
		t.Errorf("stderr %q; want the job's status row", e.stderr.String())
	}
}

func TestSubmitRefusesAnEndedParent(t *testing.T) {
	e := newTestEnv(t)
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	err := e.run(t, "submit", "--parent", fmt.Sprint(done.ID), "--", "true")
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("submit with an ended parent: %v; want a refusal", err)
	}
	if jobs, _ := e.store.JobList(context.Background(), engine.JobListParams{}); len(jobs) != 1 {
		t.Errorf("the refused submit created a job: %d jobs", len(jobs))
	}
}

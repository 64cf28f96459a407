package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	cmd := NewCmdSubmit(&Factory{IO: ios, Clock: fixedClock(testNow)}, func(_ context.Context, o *SubmitOptions) error {
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
	if o.Load != nil || o.RunTimeout != nil || o.MaxAttempts != 1 || o.Hold || o.Wait {
		t.Errorf("defaults: %+v", o)
	}
	if o.Creator != "ada@"+host {
		t.Errorf("creator %q; want ada@%s", o.Creator, host)
	}

	o, err = parseSubmit(t, "", "--type", "encode", "--operation", "transcode", "--load", "2.5",
		"--key", "k1", "--parent", "9", "--max-attempts", "3", "--backoff", "1m",
		"--run-timeout", "90s", "--at", "2030-05-06T07:08:09Z", "--hold")
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
	case o.Backoff != time.Minute, o.RunTimeout == nil || *o.RunTimeout != 90*time.Second:
		t.Errorf("backoff/timeout: %s %v", o.Backoff, o.RunTimeout)
	case o.At == nil || !o.At.Equal(at), o.In != nil, !o.Hold:
		t.Errorf("at/in/hold: %v %v %v", o.At, o.In, o.Hold)
	}

	o, err = parseSubmit(t, "", "--type", "noop", "--in", "5m", "--wait", "--timeout", "1m")
	if err != nil {
		t.Fatal(err)
	}
	if o.In == nil || *o.In != 5*time.Minute || !o.Wait || o.WaitTimeout != time.Minute || o.RunTimeout != nil {
		t.Errorf("in/wait: %v %v %s %v; want --timeout to bound the wait alone", o.In, o.Wait, o.WaitTimeout, o.RunTimeout)
	}
}

// --timeout bounds a wait and --run-timeout the run; the spellings of
// before still do what they did, and say so.
func TestSubmitTimeoutSpellings(t *testing.T) {
	const (
		oldRun  = "jobctl: warning: --timeout without --wait sets the job's run limit, as it used to; that use is deprecated: write --run-timeout (--timeout bounds the wait of --wait)\n"
		oldWait = "jobctl: warning: --wait-timeout is deprecated; use --timeout, which bounds the wait of --wait\n"
	)
	for _, c := range []struct {
		args      []string
		run, wait time.Duration // 0: not set
		warning   string
	}{
		{[]string{"--wait", "--timeout", "20s"}, 0, 20 * time.Second, ""},
		{[]string{"--wait", "--timeout", "20s", "--run-timeout", "1h"}, time.Hour, 20 * time.Second, ""},
		{[]string{"--run-timeout", "1h"}, time.Hour, 0, ""},
		{[]string{"--timeout", "1h"}, time.Hour, 0, oldRun},
		{[]string{"--wait", "--wait-timeout", "20s"}, 0, 20 * time.Second, oldWait},
		{[]string{"--wait", "--wait-timeout", "20s", "--run-timeout", "1h"}, time.Hour, 20 * time.Second, oldWait},
	} {
		ios, _, stderr := TestIO("")
		var o *SubmitOptions
		cmd := NewCmdSubmit(&Factory{IO: ios, Clock: fixedClock(testNow)}, func(_ context.Context, got *SubmitOptions) error {
			o = got
			return nil
		})
		if err := execParse(cmd, append(c.args, "--", "true")...); err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		run := time.Duration(0)
		if o.RunTimeout != nil {
			run = *o.RunTimeout
		}
		if run != c.run || o.WaitTimeout != c.wait || stderr.String() != c.warning {
			t.Errorf("%v: run limit %s, wait bound %s, stderr %q; want %s, %s, %q", c.args, run, o.WaitTimeout, stderr, c.run, c.wait, c.warning)
		}
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
		"zero run timeout":   {"--run-timeout", "0s", "--", "true"},
		"zero old timeout":   {"--timeout", "0s", "--", "true"},
		"bad timeout":        {"--timeout", "soon", "--", "true"},
		"bad run timeout":    {"--run-timeout", "soon", "--", "true"},
		"negative wait":      {"--wait", "--timeout", "-1s", "--", "true"},
		"timeout no wait":    {"--timeout", "1m", "--run-timeout", "1h", "--", "true"},
		"both wait bounds":   {"--wait", "--timeout", "1m", "--wait-timeout", "1m", "--", "true"},
		"at and in":          {"--at", "2030-01-01T00:00:00Z", "--in", "1m", "--", "true"},
		"at not a time":      {"--at", "tomorrow", "--", "true"},
		"at a bare duration": {"--at", "10m", "--", "true"},
		"at an offset back":  {"--at", "-10m", "--", "true"},
		"at a bad clock":     {"--at", "25:00", "--", "true"},
		"negative in":        {"--in", "-1m", "--", "true"},
		"hold and wait":      {"--hold", "--wait", "--", "true"},
		"wait-timeout alone": {"--wait-timeout", "1m", "--", "true"},
		"payload not JSON":   {"--payload", "{nope", "--", "true"},
		"payload file gone":  {"--payload", "@/nonexistent/p.json", "--", "true"},
		"parent zero":        {"--parent", "0", "--", "true"},
		"arg before dash":    {"echo", "--", "hi"},
		"args without dash":  {"true"},
		"typed args no dash": {"--type", "encode", "a.mp4"},
		"unknown flag":       {"--colour", "--", "true"},
		"priority zero":      {"--priority", "0", "--", "true"},
		"priority too high":  {"--priority", "101", "--", "true"},
		"priority a word":    {"--priority", "high", "--", "true"},
		"memory no unit":     {"--memory", "lots", "--", "true"},
		"memory too small":   {"--memory", "1KiB", "--", "true"},
		"memory negative":    {"--memory", "-1MiB", "--", "true"},
		"memory too large":   {"--memory", "2PiB", "--", "true"},
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
	_, err := engine.RegisterNode(ctx, e.store, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1", MaxLoad: 8, MaxJobs: 10, Weight: 100,
		Services: []engine.NodeService{{Type: "encode", Load: 3, Timeout: engine.Duration(time.Hour), Memory: 512 << 20}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--type", "encode"); err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	j := e.get(t, id)
	if j.Load != 3 || time.Duration(j.Timeout) != time.Hour || j.MemoryLimit != 512<<20 {
		t.Errorf("load %v timeout %s memory %d; want the service's 3, 1h and 512MiB", j.Load, time.Duration(j.Timeout), j.MemoryLimit)
	}
	if e.stderr.Len() != 0 {
		t.Errorf("stderr %q; want no warning when a node offers the type", e.stderr.String())
	}

	// Flags win over the service's settings.
	if err := e.run(t, "submit", "--type", "encode", "--load", "0.5", "--timeout", "2m", "--memory", "1.5GiB"); err != nil {
		t.Fatal(err)
	}
	id, _ = strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	j = e.get(t, id)
	if j.Load != 0.5 || time.Duration(j.Timeout) != 2*time.Minute || j.MemoryLimit != 3<<29 {
		t.Errorf("load %v timeout %s memory %d; want 0.5, 2m and 1.5GiB from the flags", j.Load, time.Duration(j.Timeout), j.MemoryLimit)
	}
	if err := e.run(t, "submit", "--type", "encode", "--memory", "0"); err != nil {
		t.Fatal(err)
	}
	id, _ = strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
	if j = e.get(t, id); j.MemoryLimit != 0 {
		t.Errorf("--memory 0: limit %d, want none over the service's 512MiB", j.MemoryLimit)
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
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	err := e.run(t, "submit", "--parent", fmt.Sprint(done.ID), "--", "true")
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("submit with an ended parent: %v; want a refusal", err)
	}
	if jobs, _ := e.store.JobList(context.Background(), engine.JobListParams{}); len(jobs) != 1 {
		t.Errorf("the refused submit created a job: %d jobs", len(jobs))
	}
}

func TestSubmitBatchParsing(t *testing.T) {
	t.Setenv("USER", "ada")
	stdin := strings.Join([]string{
		`{"operation": "first"}`,
		``,
		`   `,
		`{"type": "encode", "args": ["-v"], "payload": {"file": "a.mp4"}, "load": 2.5, "key": "k2",` +
			` "parent_id": 7, "max_attempts": 5, "backoff": "1m", "run_timeout": "90s", "in": "10m", "hold": false,` +
			` "memory": "2GiB"}`,
		`{"args": ["echo", "hi"], "type": ""}`,
		`{"payload": null, "hold": true}`,
	}, "\n")
	o, err := parseSubmit(t, stdin, "--batch", "-", "--type", "noop", "--load", "0.5", "--memory", "64MiB", "--key", "k",
		"--max-attempts", "2", "--run-timeout", "1h", "--at", "2030-05-06T07:08:09Z", "--payload", `{"d":1}`, "--", "default", "args")
	if err != nil {
		t.Fatal(err)
	}
	if o.Batch == nil || !slices.Equal(o.Batch.Lines, []int{1, 4, 5, 6}) || o.Batch.OldTimeout != 0 {
		t.Fatalf("batch %+v; want jobs from lines 1, 4, 5 and 6", o.Batch)
	}
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	first, full, exec, held := o.Batch.Requests[0], o.Batch.Requests[1], o.Batch.Requests[2], o.Batch.Requests[3]
	// A line that leaves fields out takes the flags.
	if first.Type != "noop" || first.Operation != "first" || *first.Load != 0.5 || first.Key != "k" ||
		first.MaxAttempts != 2 || *first.Timeout != time.Hour || !first.RunAt.Equal(at) || first.RunIn != nil ||
		string(first.Payload) != `{"d":1}` || strings.Join(first.Args, " ") != "default args" ||
		first.Backoff != 10*time.Second || first.Hold || !strings.HasPrefix(first.Creator, "ada@") ||
		first.MemoryLimit == nil || *first.MemoryLimit != 64<<20 {
		t.Errorf("line 1 with the flags' defaults: %+v", first)
	}
	// A line's own fields win; its "in" replaces --at.
	if full.Type != "encode" || strings.Join(full.Args, " ") != "-v" || string(full.Payload) != `{"file": "a.mp4"}` ||
		*full.Load != 2.5 || full.Key != "k2" || *full.ParentID != 7 || full.MaxAttempts != 5 ||
		full.Backoff != time.Minute || *full.Timeout != 90*time.Second || full.RunAt != nil || *full.RunIn != 10*time.Minute ||
		*full.MemoryLimit != 2<<30 {
		t.Errorf("line 4 with every field: %+v", full)
	}
	if exec.Type != engine.TypeExec || strings.Join(exec.Args, " ") != "echo hi" {
		t.Errorf("line 5, args and no type: type %q args %q; want exec [echo hi]", exec.Type, exec.Args)
	}
	if !held.Hold || string(held.Payload) != "null" {
		t.Errorf("line 6: hold %v payload %s; want held with a null payload", held.Hold, held.Payload)
	}

	file := filepath.Join(t.TempDir(), "jobs.jsonl")
	if err := os.WriteFile(file, []byte("{\"type\":\"noop\"}\n{\"type\":\"sleep\"}"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err = parseSubmit(t, "", "--batch", file)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Batch.Requests) != 2 || o.Batch.Requests[1].Type != "sleep" || o.Batch.Path != file {
		t.Errorf("batch from a file without a final newline: %+v", o.Batch)
	}
	if o, err = parseSubmit(t, "", "--type", "noop"); err != nil || o.Batch != nil {
		t.Errorf("without --batch: batch %+v, error %v; want none", o.Batch, err)
	}
}

func TestSubmitBatchUsageErrors(t *testing.T) {
	good := `{"type":"noop"}` + "\n"
	cases := map[string]struct {
		stdin string
		args  []string
		want  string // in the message
	}{
		"not JSON":             {good + "{nope\n", nil, "line 2:"},
		"not an object":        {good + "[1]\n", nil, "line 2:"},
		"unknown field":        {good + good + `{"type":"noop","colour":"red"}`, nil, `line 3: not a JSON object of job fields: json: unknown field "colour"`},
		"two objects":          {`{"type":"noop"} {"type":"noop"}`, nil, "line 1: more than one JSON value"},
		"args not strings":     {`{"args":[1]}`, nil, "line 1:"},
		"bad timeout":          {good + `{"type":"noop","timeout":"soon"}`, nil, `line 2: invalid "timeout" "soon"`},
		"bad run timeout":      {good + `{"type":"noop","run_timeout":"soon"}`, nil, `line 2: invalid "run_timeout" "soon"`},
		"zero timeout":         {`{"type":"noop","timeout":"0s"}`, nil, "must be positive"},
		"both timeouts":        {`{"type":"noop","timeout":"1s","run_timeout":"1s"}`, nil, `line 1: "timeout" is the old name of "run_timeout"`},
		"invalid UTF-8":        {good + "{\"args\":[\"echo\",\"caf\xe9\"]}", nil, "line 2: not valid UTF-8 text"},
		"invalid UTF-8 key":    {"{\"type\":\"noop\",\"key\":\"\xff\"}", nil, "line 1: not valid UTF-8 text"},
		"negative backoff":     {`{"type":"noop","backoff":"-1s"}`, nil, "must not be negative"},
		"negative in":          {`{"type":"noop","in":"-1m"}`, nil, "must not be negative"},
		"duration not string":  {`{"type":"noop","in":60}`, nil, "line 1:"},
		"negative load":        {`{"type":"noop","load":-1}`, nil, `invalid "load"`},
		"zero attempts":        {`{"type":"noop","max_attempts":0}`, nil, `invalid "max_attempts"`},
		"parent zero":          {`{"type":"noop","parent_id":0}`, nil, `invalid "parent_id"`},
		"memory not a size":    {`{"type":"noop","memory":"lots"}`, nil, `line 1: invalid "memory": "lots" is not a size`},
		"memory a number":      {`{"type":"noop","memory":64}`, nil, "line 1:"},
		"no type":              {"\n\n{}", nil, "line 3: no job type"},
		"exec without command": {`{"type":"exec"}`, nil, "needs a command"},
		"line too long":        {good + `{"type":"noop","payload":"` + strings.Repeat("x", maxBatchLine) + `"}`, nil, "line 2: longer than"},
		"no file":              {"", []string{"--batch", "/nonexistent/jobs.jsonl"}, "/nonexistent/jobs.jsonl"},
		"empty path":           {"", []string{"--batch", ""}, "--batch needs a file"},
		"with wait":            {good, []string{"--batch", "-", "--wait"}, "--wait cannot be combined with --batch"},
		"stdin twice":          {good, []string{"--batch", "-", "--payload", "-"}, "both read stdin"},
		"quiet and json":       {good, []string{"--batch", "-", "-q", "-o", "json"}, "-q and -o json"},
	}
	for name, c := range cases {
		args := c.args
		if args == nil {
			args = []string{"--batch", "-"}
		}
		_, err := parseSubmit(t, c.stdin, args...)
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want a UsageError saying %q", name, err, c.want)
		}
	}
}

// batchIDs reads the ids submit printed, one a line.
func batchIDs(t *testing.T, stdout string) []int64 {
	t.Helper()
	var ids []int64
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		id, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("stdout line %q is not an id", line)
		}
		ids = append(ids, id)
	}
	return ids
}

// A batch from stdin of two full chunks and part of a third (the engine
// inserts a thousand lines a transaction) stores every line, in order.
func TestSubmitBatchOfSeveralChunksFromStdin(t *testing.T) {
	e := newTestEnv(t)
	const n = 2*engine.SubmitChunk + engine.SubmitChunk/2
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"operation":"op-%d","payload":{"i":%d}}`+"\n", i, i)
		if i%1000 == 0 {
			b.WriteString("\n") // blank lines are skipped
		}
	}
	e.f.IO.In = strings.NewReader(b.String())
	if err := e.run(t, "submit", "--batch", "-", "--type", "noop", "--key", "bulk"); err != nil {
		t.Fatal(err)
	}
	ids := batchIDs(t, e.stdout.String())
	if len(ids) != n {
		t.Fatalf("printed %d ids, want %d", len(ids), n)
	}
	jobs, err := e.store.JobList(context.Background(), engine.JobListParams{Key: "bulk"})
	if err != nil || len(jobs) != n {
		t.Fatalf("stored %d jobs (%v), want %d", len(jobs), err, n)
	}
	for i, j := range jobs {
		if j.ID != ids[i] || j.Operation != fmt.Sprintf("op-%d", i) || string(j.Payload) != fmt.Sprintf(`{"i":%d}`, i) ||
			j.Type != "noop" || j.Status != engine.StatusQueued {
			t.Fatalf("job %d: %+v; want id %d, op-%d, its payload, a queued noop", i, j, ids[i], i)
		}
	}
	if !strings.Contains(e.stderr.String(), `no registered node offers type "noop"`) {
		t.Errorf("stderr %q; want one warning that no node runs noop jobs", e.stderr.String())
	}
}

// A line the engine refuses (here an unknown parent) fails the whole
// batch, naming its line, before anything is created.
func TestSubmitBatchRefusedLineCreatesNothing(t *testing.T) {
	e := newTestEnv(t)
	ended := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	for name, c := range map[string]struct{ line, want string }{
		"unknown parent":  {`{"parent_id": 999}`, "line 1502: parent: job 999 not found"},
		"ended parent":    {fmt.Sprintf(`{"parent_id": %d}`, ended.ID), "line 1502: invalid job: parent job"},
		"payload too big": {`{"payload": "` + strings.Repeat("x", engine.MaxPayloadBytes) + `"}`, "line 1502: invalid job: payload is larger"},
		"type too long":   {`{"type": "` + strings.Repeat("t", engine.MaxNameLength+1) + `"}`, "line 1502: invalid job: type is longer"},
	} {
		lines := make([]string, 1502)
		for i := range lines {
			lines[i] = `{}`
		}
		lines[1501] = c.line
		e.f.IO.In = strings.NewReader(strings.Join(lines, "\n"))
		err := e.run(t, "submit", "--batch", "-", "--type", "noop")
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want a UsageError saying %q", name, err, c.want)
		}
		if e.stdout.Len() != 0 {
			t.Errorf("%s: stdout %q; want nothing", name, e.stdout.String())
		}
	}
	if jobs, _ := e.store.JobList(context.Background(), engine.JobListParams{}); len(jobs) != 1 {
		t.Errorf("refused batches created jobs: %d jobs, want the one ended job", len(jobs))
	}
}

func TestSubmitOutputFormats(t *testing.T) {
	e := newTestEnv(t)
	batch := `{"type":"noop"}` + "\n" + `{"type":"sleep","payload":"1s"}` + "\n"

	e.f.IO.In = strings.NewReader(batch)
	if err := e.run(t, "submit", "--batch", "-", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got []*engine.Job
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil || len(got) != 2 || got[1].ID != got[0].ID+1 {
		t.Fatalf("-o json: %s (%v); want an array of the two new jobs", e.stdout.String(), err)
	}
	for i, typ := range []string{"noop", "sleep"} {
		if got[i].Type != typ {
			t.Errorf("-o json job %d has type %q; want %q", i, got[i].Type, typ)
		}
		wantJobJSON(t, "submit --batch -o json", got[i], e.get(t, got[i].ID))
	}
	e.f.IO.In = strings.NewReader(batch)
	if err := e.run(t, "submit", "--batch", "-", "-q"); err != nil {
		t.Fatal(err)
	}
	if ids := batchIDs(t, e.stdout.String()); len(ids) != 2 || ids[0] != got[1].ID+1 {
		t.Errorf("-q: %q; want the next two ids, one a line", e.stdout.String())
	}

	e.f.IO.In = strings.NewReader("\n\n")
	if err := e.run(t, "submit", "--batch", "-", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(e.stdout.String()) != "[]" {
		t.Errorf("an empty batch with -o json: %q; want []", e.stdout.String())
	}

	if err := e.run(t, "submit", "--type", "noop", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var one []*engine.Job
	if err := json.Unmarshal(e.stdout.Bytes(), &one); err != nil || len(one) != 1 {
		t.Fatalf("a single submit with -o json: %s (%v); want an array of the new job", e.stdout.String(), err)
	}
	wantJobJSON(t, "submit -o json", one[0], e.get(t, one[0].ID))

	if err := e.run(t, "submit", "--type", "noop", "--jq", ".[0].id"); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d\n", one[0].ID+1); e.stdout.String() != want {
		t.Errorf("submit --jq .[0].id printed %q; want %q", e.stdout.String(), want)
	}
}

// wantJobJSON checks that a job printed as JSON is the job as the store
// holds it, field for field.
func wantJobJSON(t *testing.T, what string, got, want *engine.Job) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s printed\n%s\nwant the job as stored:\n%s", what, g, w)
	}
}

// A batch line's "timeout" is the run limit's old name: it still sets the
// run limit, and the batch says once that it is deprecated.
func TestSubmitBatchOldTimeoutName(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.In = strings.NewReader(`{"type":"noop","timeout":"90s"}` + "\n" + `{"type":"noop","timeout":"2m"}` + "\n" + `{"type":"noop","run_timeout":"3m"}` + "\n")
	if err := e.run(t, "submit", "--batch", "-"); err != nil {
		t.Fatal(err)
	}
	ids := batchIDs(t, e.stdout.String())
	for i, want := range []time.Duration{90 * time.Second, 2 * time.Minute, 3 * time.Minute} {
		if got := time.Duration(e.get(t, ids[i]).Timeout); got != want {
			t.Errorf("job of line %d: run limit %s; want %s", i+1, got, want)
		}
	}
	if want := "jobctl: warning: --batch -: line 1: \"timeout\" is deprecated; name the run limit \"run_timeout\"\n"; !strings.HasPrefix(e.stderr.String(), want) ||
		strings.Count(e.stderr.String(), "deprecated") != 1 {
		t.Errorf("stderr %q; want %q", e.stderr.String(), want)
	}
}

// Invalid UTF-8 in a batch, from stdin or a file, is refused as it is in
// arguments: a usage error naming the line, and no job written.
func TestSubmitBatchInvalidUTF8WritesNothing(t *testing.T) {
	e := newTestEnv(t)
	batch := "{\"type\":\"noop\"}\n{\"type\":\"noop\",\"operation\":\"caf\xe9\"}\n"
	file := filepath.Join(t.TempDir(), "jobs.jsonl")
	if err := os.WriteFile(file, []byte(batch), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"-", file} {
		e.f.IO.In = strings.NewReader(batch)
		err := e.run(t, "submit", "--batch", path)
		var u *UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "--batch "+path+": line 2: not valid UTF-8 text") {
			t.Errorf("--batch %s: %v; want a usage error naming line 2", path, err)
		}
	}
	// The same bytes as an argument are refused as well.
	if err := e.run(t, "submit", "--operation", "caf\xe9", "--type", "noop"); err == nil {
		t.Error("an operation that is not UTF-8 was accepted")
	}
	if jobs, _ := e.store.JobList(context.Background(), engine.JobListParams{}); len(jobs) != 0 {
		t.Errorf("refused submits created %d jobs", len(jobs))
	}
}

// addNode registers a node that runs jobs of types at most maxLoad
// large, as `jobctl serve` would, with change applied first.
func (e *testEnv) addNode(t *testing.T, name string, maxLoad float64, types []string, change func(*engine.Node)) {
	t.Helper()
	n := engine.Node{Name: name, URL: "http://" + name, MaxLoad: maxLoad, MaxJobs: 10, Weight: 100,
		State: engine.NodeOnline, AcceptExceeding: true}
	for _, typ := range types {
		n.Services = append(n.Services, engine.NodeService{Type: typ})
	}
	if change != nil {
		change(&n)
	}
	if _, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: n}); err != nil {
		t.Fatal(err)
	}
	if n.Maintenance {
		if err := e.store.NodeSetMaintenance(context.Background(), name, true); err != nil {
			t.Fatal(err)
		}
	}
}

// submit warns of a job no node can ever run, or one larger than every
// node, as it does of a type no node offers; --strict refuses each of them
// (exit 2) before anything is written, and passes a job that fits.
func TestSubmitWarnsOfJobsNoNodeCanRun(t *testing.T) {
	e := newTestEnv(t)
	e.addNode(t, "small", 2, []string{engine.TypeSleep}, nil)
	e.addNode(t, "strict", 4, []string{"encode"}, func(n *engine.Node) { n.AcceptExceeding = false })
	e.addNode(t, "resting", 4, []string{"mail"}, func(n *engine.Node) { n.Maintenance = true })
	for _, c := range []struct {
		args []string
		want string // the warning; "" for none
	}{
		{[]string{"--type", "sleep", "--load", "2"}, ""},
		{[]string{"--type", "sleep", "--load", "50"},
			"its load 50 is above every node's max load (the largest is 2): it will run alone on one of the largest nodes, which takes no other job until then"},
		{[]string{"--type", "nosuch"}, `no registered node offers type "nosuch"; the job waits until one does`},
		{[]string{"--", "echo", "hi"}, `no registered node offers type "exec"; the job waits until one does`},
		{[]string{"--type", "encode", "--load", "5"},
			"no node can run it as the cluster is now: its load 5 is above every node's max load (the largest is 4) and the largest nodes decline loads above their max; " +
				"start the largest nodes with --accept-exceeding, or submit the job with a smaller --load"},
		{[]string{"--type", "mail"},
			`no node can run it as the cluster is now: no ONLINE node offers type "mail": every node offering it is offline, in maintenance or in error; ` +
				"bring one of them back, or take it out of maintenance with 'jobctl nodes maintenance NAME off'"},
	} {
		before := len(e.list(t))
		if err := e.run(t, append([]string{"submit"}, c.args...)...); err != nil {
			t.Errorf("submit %v: %v", c.args, err)
			continue
		}
		want := ""
		if c.want != "" {
			want = "jobctl: warning: " + c.want + "\n"
		}
		if e.stderr.String() != want {
			t.Errorf("submit %v: stderr %q; want %q", c.args, e.stderr.String(), want)
		}
		if len(e.list(t)) != before+1 {
			t.Errorf("submit %v created no job; a warning creates it all the same", c.args)
		}

		before = len(e.list(t))
		err := e.run(t, append([]string{"submit", "--strict"}, c.args...)...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("submit --strict %v: %v; want the job created", c.args, err)
		case c.want != "" && (!errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "(refused by --strict)")):
			t.Errorf("submit --strict %v: %v; want it refused as invalid (exit 2)", c.args, err)
		case c.want != "" && (len(e.list(t)) != before || e.stdout.Len() != 0):
			t.Errorf("submit --strict %v wrote a job or printed %q", c.args, e.stdout.String())
		}
	}
}

// A batch warns once per reason, naming the first line and how many more;
// with --strict the first such line refuses the whole batch.
func TestSubmitBatchWarnsOfJobsNoNodeCanRun(t *testing.T) {
	e := newTestEnv(t)
	e.addNode(t, "small", 2, []string{engine.TypeSleep}, nil)
	batch := `{"load":1}` + "\n" + `{"load":50}` + "\n" + `{"type":"nosuch"}` + "\n" + `{"load":50}` + "\n" + `{"load":9}` + "\n"
	e.f.IO.In = strings.NewReader(batch)
	if err := e.run(t, "submit", "--batch", "-", "--type", "sleep"); err != nil {
		t.Fatal(err)
	}
	want := "jobctl: warning: --batch -: line 2 and 1 more: its load 50 is above every node's max load (the largest is 2): it will run alone on one of the largest nodes, which takes no other job until then\n" +
		"jobctl: warning: --batch -: line 3: no registered node offers type \"nosuch\"; the job waits until one does\n" +
		"jobctl: warning: --batch -: line 5: its load 9 is above every node's max load (the largest is 2): it will run alone on one of the largest nodes, which takes no other job until then\n"
	if e.stderr.String() != want {
		t.Errorf("stderr\n%s\nwant\n%s", e.stderr.String(), want)
	}
	if n := len(e.list(t)); n != 5 {
		t.Fatalf("%d jobs; want the batch's 5", n)
	}
	e.f.IO.In = strings.NewReader(batch)
	err := e.run(t, "submit", "--batch", "-", "--type", "sleep", "--strict")
	var u *UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "--batch -: line 2: invalid job: its load 50 is above every node's max load") {
		t.Errorf("--strict: %v; want a usage error naming line 2", err)
	}
	if n := len(e.list(t)); n != 5 || e.stdout.Len() != 0 {
		t.Errorf("--strict wrote jobs: %d, printed %q", n, e.stdout.String())
	}
}

func (e *testEnv) list(t *testing.T) []*engine.Job {
	t.Helper()
	jobs, err := e.store.JobList(context.Background(), engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// watchedStore notes the calls a plain submit must not make: it reads
// neither the nodes nor the list of migrations, and inserts through
// JobSubmit, the one statement, with its event.
type watchedStore struct {
	engine.Store
	calls []string
}

func (w *watchedStore) NodeList(ctx context.Context) ([]*engine.Node, error) {
	w.calls = append(w.calls, "NodeList")
	return w.Store.NodeList(ctx)
}

func (w *watchedStore) MigrationStatus(ctx context.Context) ([]engine.Migration, error) {
	w.calls = append(w.calls, "MigrationStatus")
	return w.Store.MigrationStatus(ctx)
}

func (w *watchedStore) Migrate(ctx context.Context) error {
	w.calls = append(w.calls, "Migrate")
	return w.Store.Migrate(ctx)
}

func (w *watchedStore) JobInsert(ctx context.Context, p engine.JobInsertParams) (*engine.Job, error) {
	w.calls = append(w.calls, "JobInsert")
	return w.Store.JobInsert(ctx, p)
}

func (w *watchedStore) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	w.calls = append(w.calls, "JobGet")
	return w.Store.JobGet(ctx, id)
}

func (w *watchedStore) Tx(ctx context.Context, fn func(tx engine.TxStore) error) error {
	w.calls = append(w.calls, "Tx")
	return w.Store.Tx(ctx, fn)
}

// A plain submit in a new process asks whether the schema is current and
// submits, nothing else, when a node that can run the job offers its type;
// the job's event is recorded with it. -o json reads the job back. Only a
// job the nodes may not run (here of a type none offers) reads the nodes,
// once the job is in, to say why; --strict reads them first.
func TestPlainSubmitAsksOnlyForTheSchemaAndSubmits(t *testing.T) {
	e := newTestEnv(t)
	watched := &watchedStore{Store: e.store}
	ios, stdout, _ := TestIO("")
	f := NewFactory(ios)
	f.Clock = fixedClock(testNow)
	f.Open = func(context.Context) (engine.Store, error) { return watched, nil }
	e.addNode(t, "n1", 4, []string{engine.TypeNoop}, nil)
	submit := func(args ...string) {
		t.Helper()
		watched.calls = nil
		stdout.Reset()
		root := NewRootCmd(f, "1.2.3")
		root.SetArgs(append([]string{"submit"}, args...))
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	submit("--type", "noop")
	if len(watched.calls) != 0 {
		t.Errorf("a plain submit called %v", watched.calls)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64)
	if err != nil || id <= 0 {
		t.Fatalf("stdout %q; want the new id", stdout)
	}
	events, err := e.store.EventList(context.Background(), engine.EventListParams{JobID: &id})
	if err != nil || len(events) != 1 || events[0].Verb != engine.EventSubmit || events[0].Type != engine.TypeNoop {
		t.Errorf("events of the submitted job: %+v, %v; want its submit", events, err)
	}
	submit("--type", "noop", "-o", "json")
	if !slices.Equal(watched.calls, []string{"JobGet"}) {
		t.Errorf("submit -o json called %v; want one JobGet", watched.calls)
	}
	submit("--type", "encode")
	if !slices.Equal(watched.calls, []string{"NodeList"}) {
		t.Errorf("a submit of a type no node offers called %v; want one NodeList, for the warning", watched.calls)
	}
	submit("--type", "noop", "--strict")
	if !slices.Equal(watched.calls, []string{"NodeList"}) {
		t.Errorf("submit --strict called %v; want one NodeList, before the job is written", watched.calls)
	}
}

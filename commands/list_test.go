package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func parseList(t *testing.T, args ...string) (*ListOptions, error) {
	t.Helper()
	ios, _, _ := TestIO("")
	var got *ListOptions
	err := execParse(NewCmdList(&Factory{IO: ios, Clock: fixedClock(testNow)}, func(_ context.Context, o *ListOptions) error {
		got = o
		return nil
	}), args...)
	return got, err
}

func TestListParsing(t *testing.T) {
	o, err := parseList(t)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(o.Filter.Statuses, engine.StatusDeleted) || len(o.Filter.Statuses) != len(engine.AllStatuses)-1 {
		t.Errorf("default states %v; want every state but DELETED", o.Filter.Statuses)
	}
	if o.Filter.Limit != defaultListLimit || o.Watch || o.Output.Format != formatTable || o.Output.Quiet {
		t.Errorf("defaults: %+v", o)
	}

	o, err = parseList(t, "--state", "queued,Running", "--state", "FAILED", "--type", "a,b", "--node", "n1",
		"--key", "k", "--parent", "4", "--limit", "0", "-w", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Status{engine.StatusQueued, engine.StatusRunning, engine.StatusFailed}
	if !slices.Equal(o.Filter.Statuses, want) {
		t.Errorf("states %v; want %v", o.Filter.Statuses, want)
	}
	if !slices.Equal(o.Filter.Types, []string{"a", "b"}) || o.Filter.Node != "n1" || o.Filter.Key != "k" ||
		o.Filter.ParentID == nil || *o.Filter.ParentID != 4 || o.Filter.Limit != 0 || !o.Watch || o.Output.Format != formatWide {
		t.Errorf("filters: %+v", o)
	}

	o, err = parseList(t, "--state", "all")
	if err != nil {
		t.Fatal(err)
	}
	if o.Filter.Statuses != nil {
		t.Errorf("--state all gives %v; want no state filter", o.Filter.Statuses)
	}
}

func TestListUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown state":  {"--state", "NOSUCHSTATE"},
		"one bad state":  {"--state", "queued,nope"},
		"negative limit": {"--limit", "-1"},
		"quiet and json": {"-q", "-o", "json"},
		"unknown format": {"-o", "yaml"},
		"argument":       {"extra"},
	} {
		if _, err := parseList(t, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("%s: error %v; want a UsageError", name, err)
		}
	}
}

// listFixture makes three jobs: queued noop, running sleep on n1 with a
// key, and a deleted one.
func listFixture(t *testing.T, e *testEnv) (queued, running, deleted *engine.Job) {
	t.Helper()
	queued = e.insert(t, engine.JobInsertParams{Operation: "ping"})
	running = e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Key: "k1", Load: 2.5, MaxAttempts: 2}),
		engine.StatusRunning)
	deleted = e.move(t, e.insert(t, engine.JobInsertParams{}),
		engine.StatusRunning, engine.StatusFinished, engine.StatusDeleted)
	return queued, running, deleted
}

func rfc3339(t *time.Time) string { return t.UTC().Format(time.RFC3339) }

func TestListPiped(t *testing.T) {
	e := newTestEnv(t)
	q, r, _ := listFixture(t, e)
	if err := e.run(t, "list"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d\tQUEUED\tnoop\tping\t\t1\t\t%s\n", q.ID, rfc3339(&q.CreatedAt)) +
		fmt.Sprintf("%d\tRUNNING\tsleep\t\tn1\t2.5\t0%%\t%s\n", r.ID, rfc3339(&r.CreatedAt))
	if got := e.stdout.String(); got != want {
		t.Errorf("piped list:\n%q\nwant (no header, deleted job hidden):\n%q", got, want)
	}

	if err := e.run(t, "list", "-o", "wide", "--state", "running"); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("%d\tRUNNING\tsleep\t\tn1\t2.5\t0%%\t%s\tk1\t50\t\t1/2\t%s\t\t\t\t\t\t\t\t\n",
		r.ID, rfc3339(&r.CreatedAt), rfc3339(r.StartedAt))
	if got := e.stdout.String(); got != want {
		t.Errorf("piped wide list:\n%q\nwant:\n%q", got, want)
	}
}

func TestListQuietAndFilters(t *testing.T) {
	e := newTestEnv(t)
	q, r, d := listFixture(t, e)
	cases := []struct {
		args []string
		want []int64
	}{
		{[]string{"list", "-q"}, []int64{q.ID, r.ID}},
		{[]string{"list", "-q", "--state", "all"}, []int64{q.ID, r.ID, d.ID}},
		{[]string{"list", "-q", "--state", "deleted"}, []int64{d.ID}},
		{[]string{"list", "-q", "--type", "sleep"}, []int64{r.ID}},
		{[]string{"list", "-q", "--node", "n1"}, []int64{r.ID}},
		{[]string{"list", "-q", "--key", "k1"}, []int64{r.ID}},
		{[]string{"list", "-q", "--limit", "1"}, []int64{r.ID}},
	}
	for _, c := range cases {
		if err := e.run(t, c.args...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var want strings.Builder
		for _, id := range c.want {
			fmt.Fprintln(&want, id)
		}
		if got := e.stdout.String(); got != want.String() {
			t.Errorf("%v printed %q; want %q", c.args, got, want.String())
		}
	}
}

func TestListJSON(t *testing.T) {
	e := newTestEnv(t)
	q, r, _ := listFixture(t, e)
	if err := e.run(t, "list", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var jobs []map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &jobs); err != nil {
		t.Fatalf("list -o json is not a JSON array: %v\n%s", err, e.stdout.String())
	}
	if len(jobs) != 2 || jobs[0]["id"] != float64(q.ID) || jobs[1]["id"] != float64(r.ID) {
		t.Fatalf("list -o json = %v; want jobs %d and %d", jobs, q.ID, r.ID)
	}
	// Each element is what `show -o json` prints for that job, but for the
	// children show alone reads.
	if err := e.run(t, "show", fmt.Sprint(r.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var shown map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &shown); err != nil {
		t.Fatal(err)
	}
	if _, ok := shown["children"]; !ok {
		t.Errorf("show -o json lacks the children: %s", e.stdout.String())
	}
	delete(shown, "children")
	delete(shown, "attempts") // show alone reads them
	delete(shown, "ended_by") // and who ended it
	a, _ := json.Marshal(jobs[1])
	b, _ := json.Marshal(shown)
	if string(a) != string(b) {
		t.Errorf("list element %s\ndiffers from show -o json %s", a, b)
	}

	if err := e.run(t, "list", "-o", "json", "--state", "failed"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(e.stdout.String()); got != "[]" {
		t.Errorf("empty listing as JSON = %q; want []", got)
	}
}

func TestListTerminal(t *testing.T) {
	e := newTestEnv(t)
	q, _, _ := listFixture(t, e)
	e.f.IO.OutIsTerminal = true
	e.f.IO.NoColor = true
	e.f.Clock = fixedClock(q.CreatedAt.Add(90 * time.Second))
	if err := e.run(t, "list", "--state", "queued"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ID  STATUS  TYPE  OPERATION  NODE  LOAD  PROGRESS  AGE\n"+
		"%-2d  QUEUED  noop  ping       -     1     -         1m30s\n", q.ID)
	if got := e.stdout.String(); got != want {
		t.Errorf("terminal list:\n%s\nwant:\n%s", got, want)
	}
}

// syncBuffer is an output buffer a watching command and the test may use
// at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestListWatchPrintsChanges(t *testing.T) {
	e := newTestEnv(t)
	q := e.insert(t, engine.JobInsertParams{})
	out := &syncBuffer{}
	ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: out}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- listRun(ctx, &ListOptions{
			IO: ios, Store: e.f.Store, Clock: e.f.Clock, Watch: true, Interval: 10 * time.Millisecond,
			Filter: engine.JobListParams{Limit: 100}, Output: outputOptions{Quiet: true},
		})
	}()
	waitfor.Until(t, 10*time.Second, "the first listing", func() bool { return out.String() == fmt.Sprintf("%d\n", q.ID) })

	q2 := e.insert(t, engine.JobInsertParams{})
	waitfor.Until(t, 10*time.Second, "the new job", func() bool { return out.String() == fmt.Sprintf("%d\n%d\n", q.ID, q2.ID) })
	e.move(t, q, engine.StatusRunning)
	waitfor.Until(t, 10*time.Second, "the changed job", func() bool { return out.String() == fmt.Sprintf("%d\n%d\n%d\n", q.ID, q2.ID, q.ID) })

	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended by interruption returned %v; want nil", err)
	}
}

func TestListSaysWhenTheLimitCutsItShort(t *testing.T) {
	e := newTestEnv(t)
	var ids []int64
	for range 3 {
		ids = append(ids, e.insert(t, engine.JobInsertParams{}).ID)
	}
	const note = "jobctl: showing the newest 2 of 3 matching jobs; --limit 0 lists all\n"
	cases := []struct {
		args   []string
		want   []int64
		stderr string
	}{
		{[]string{"list", "-q", "--limit", "2"}, ids[1:], note},
		{[]string{"list", "-q", "--limit", "3"}, ids, ""},
		{[]string{"list", "-q", "--limit", "0"}, ids, ""},
	}
	for _, c := range cases {
		if err := e.run(t, c.args...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var want strings.Builder
		for _, id := range c.want {
			fmt.Fprintln(&want, id)
		}
		if got := e.stdout.String(); got != want.String() {
			t.Errorf("%v printed %q; want %q", c.args, got, want.String())
		}
		if got := e.stderr.String(); got != c.stderr {
			t.Errorf("%v wrote %q on stderr; want %q", c.args, got, c.stderr)
		}
	}
}

// A listing of a table too large to count says "more than" the count's cap
// rather than reading every matching job to tell the exact figure.
func TestListCountsAtMostTheCap(t *testing.T) {
	e := newTestEnv(t)
	ps := make([]engine.JobInsertParams, listCountCap+1)
	for i := range ps {
		ps[i] = engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued}
	}
	if _, err := e.store.JobInsertMany(t.Context(), ps); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "list", "-q", "--limit", "1"); err != nil {
		t.Fatal(err)
	}
	want := "jobctl: showing the newest 1 of more than 10,000 matching jobs; --limit 0 lists all\n"
	if got := e.stderr.String(); got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	e.stdout.Reset()
	e.stderr.Reset()
	if err := e.run(t, "list", "-q", "--limit", "1", "--state", "running"); err != nil || e.stderr.Len() != 0 {
		t.Errorf("nothing running: %v, stderr %q", err, e.stderr.String())
	}
}

// TestListHeaders: a listing's header row shows on a terminal and not
// when piped, and --headers and --no-headers turn it on or off for either.
func TestListHeaders(t *testing.T) {
	e := newTestEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	header := "ID\tSTATUS\tTYPE\tOPERATION\tNODE\tLOAD\tPROGRESS\tAGE\n"
	row := fmt.Sprintf("%d\tQUEUED\tnoop\t\t\t1\t\t%s\n", j.ID, j.CreatedAt.UTC().Format(time.RFC3339))
	for _, tc := range []struct {
		terminal bool
		flags    []string
		header   bool
	}{
		{false, nil, false},
		{false, []string{"--headers"}, true},
		{false, []string{"--no-headers"}, false},
		{true, nil, true},
		{true, []string{"--no-headers"}, false},
		{true, []string{"--headers"}, true},
	} {
		e.f.IO.OutIsTerminal, e.f.IO.NoColor = tc.terminal, true
		if err := e.run(t, append([]string{"list"}, tc.flags...)...); err != nil {
			t.Fatal(err)
		}
		got := e.stdout.String()
		if !tc.terminal {
			want := row
			if tc.header {
				want = header + row
			}
			if got != want {
				t.Errorf("piped %v: %q; want %q", tc.flags, got, want)
			}
			continue
		}
		if has := strings.HasPrefix(got, "ID "); has != tc.header || !strings.Contains(got, "QUEUED") {
			t.Errorf("terminal %v: %q; want a header %v", tc.flags, got, tc.header)
		}
	}
	e.f.IO.OutIsTerminal = false
	err := e.run(t, "list", "--headers", "--no-headers")
	if !errors.As(err, new(*UsageError)) {
		t.Errorf("--headers --no-headers: %v; want a usage error", err)
	}
}

// TestListWideCommandAndExit: -o wide shows a job's exit code and its
// command, each argument's bounds visible, cut to fit on a terminal and
// whole when piped.
func TestListWideCommandAndExit(t *testing.T) {
	e := newTestEnv(t)
	args := []string{"sh", "-c", "echo hello world; sleep 1; echo a rather long tail of words; exit 3"}
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeExec, Args: args})
	j = e.move(t, j, engine.StatusRunning)
	if _, err := e.store.JobUpdate(context.Background(), engine.OutcomeUpdate(j,
		engine.RunResult{Outcome: engine.RunFailed, ExitCode: 3, Reason: "exit 3"}, false, func() float64 { return 0 })); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "list", "-o", "wide", "--headers"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("piped wide list: %q", e.stdout)
	}
	header, row := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	cell := func(name string) string {
		i := slices.Index(header, name)
		if i < 0 || i >= len(row) {
			t.Fatalf("no %s column in %q / %q", name, lines[0], lines[1])
		}
		return row[i]
	}
	if got := cell("EXIT"); got != "3" {
		t.Errorf("EXIT %q; want 3", got)
	}
	want := `sh -c "echo hello world; sleep 1; echo a rather long tail of words; exit 3"`
	if got := cell("COMMAND"); got != want {
		t.Errorf("COMMAND %q; want %q", got, want)
	}

	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "list", "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	cut := ansi.Truncate(want, commandCellWidth, "…")
	if !strings.Contains(e.stdout.String(), cut+"\n") || strings.Contains(e.stdout.String(), want) || ansi.StringWidth(cut) != commandCellWidth {
		t.Errorf("terminal wide list:\n%s\nwant the command cut to %q", e.stdout, cut)
	}
}

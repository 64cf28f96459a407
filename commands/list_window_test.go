package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// insertLater creates a job once the database clock has moved past prev's
// creation, so the two have distinct created times.
func (e *testEnv) insertLater(t *testing.T, prev *engine.Job, p engine.JobInsertParams) *engine.Job {
	t.Helper()
	waitfor.Until(t, 10*time.Second, "the database clock to move on", func() bool {
		now, err := e.store.Now(context.Background())
		return err == nil && now.After(prev.CreatedAt)
	})
	return e.insert(t, p)
}

func idLines(jobs ...*engine.Job) string {
	var b strings.Builder
	for _, j := range jobs {
		fmt.Fprintln(&b, j.ID)
	}
	return b.String()
}

func TestListSinceUntil(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{})
	b := e.insertLater(t, a, engine.JobInsertParams{})
	c := e.insertLater(t, b, engine.JobInsertParams{})
	e.f.Clock = fixedClock(c.CreatedAt.Add(time.Hour))
	at := func(j *engine.Job) string { return j.CreatedAt.Format(time.RFC3339Nano) }
	cases := []struct {
		args   []string
		want   string
		stderr string
	}{
		{[]string{"--since", at(b)}, idLines(b, c), ""},
		{[]string{"--until", at(b)}, idLines(a, b), ""},
		{[]string{"--since", at(a), "--until", at(b)}, idLines(a, b), ""},
		{[]string{"--since", "2h"}, idLines(a, b, c), ""},
		{[]string{"--since", "-1d"}, idLines(a, b, c), ""},
		{[]string{"--since", "30m"}, "", ""},
		{[]string{"--until", "30m"}, idLines(a, b, c), ""},
		{[]string{"--since", at(a), "--limit", "1"}, idLines(c), "jobctl: showing the newest 1 of 3 matching jobs; --limit 0 lists all\n"},
		{[]string{"--since", at(b), "--limit", "1"}, idLines(c), "jobctl: showing the newest 1 of 2 matching jobs; --limit 0 lists all\n"},
		{[]string{"--until", at(b), "--limit", "1"}, idLines(b), "jobctl: showing the newest 1 of 2 matching jobs; --limit 0 lists all\n"},
		{[]string{"--since", at(b), "--until", at(b)}, idLines(b), ""},
		{[]string{"--since", at(b), "--sort", "-id"}, idLines(c, b), ""},
	}
	for _, cs := range cases {
		args := append([]string{"list", "-q"}, cs.args...)
		if err := e.run(t, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if got := e.stdout.String(); got != cs.want {
			t.Errorf("%v printed %q; want %q", args, got, cs.want)
		}
		if got := e.stderr.String(); got != cs.stderr {
			t.Errorf("%v wrote %q on stderr; want %q", args, got, cs.stderr)
		}
	}

	for _, args := range [][]string{
		{"--since", "yesterday"},
		{"--until", "+1h"},
		{"--since", at(c), "--until", at(a)},
	} {
		args = append([]string{"list"}, args...)
		if err := e.run(t, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("%v: %v; want a usage error", args, err)
		}
	}
}

// A watching listing keeps to the window: a job created before --since
// stays out however often it changes.
func TestListWatchKeepsTheWindow(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{})
	b := e.insertLater(t, a, engine.JobInsertParams{})
	c := e.insert(t, engine.JobInsertParams{})
	out := &syncBuffer{}
	ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	since := b.CreatedAt
	go func() {
		done <- listRun(ctx, &ListOptions{
			IO: ios, Store: e.f.Store, Clock: e.f.Clock, Watch: true, Interval: 10 * time.Millisecond,
			Filter: engine.JobListParams{CreatedAfter: &since}, Output: outputOptions{Quiet: true},
		})
	}()
	waitfor.Until(t, 10*time.Second, "the first listing", func() bool { return out.String() == idLines(b, c) })
	// a changes before d is created, so the poll that shows d would show a
	// too, were it let in.
	e.move(t, a, engine.StatusRunning)
	d := e.insert(t, engine.JobInsertParams{})
	waitfor.Until(t, 10*time.Second, "the new job", func() bool { return out.String() == idLines(b, c, d) })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended by interruption returned %v; want nil", err)
	}
	if got := out.String(); got != idLines(b, c, d) {
		t.Errorf("watch printed %q; want %q", got, idLines(b, c, d))
	}
}

func TestListSort(t *testing.T) {
	e := newTestEnv(t)
	light := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Load: 0.5})
	heavy := e.insert(t, engine.JobInsertParams{Type: engine.TypeNoop, Load: 4})
	mid := e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"true"}, Load: 2}),
		engine.StatusRunning)
	same := e.insert(t, engine.JobInsertParams{Type: engine.TypeNoop, Load: 4})
	cases := map[string]string{
		"load":      idLines(light, mid, heavy, same),
		"-load":     idLines(same, heavy, mid, light), // equal rows by id, the same way
		"type":      idLines(mid, heavy, same, light),
		"-id":       idLines(same, mid, heavy, light),
		"status":    idLines(light, heavy, same, mid),
		"node":      idLines(light, heavy, same, mid),
		"-node":     idLines(mid, same, heavy, light),
		"started":   idLines(light, heavy, same, mid),
		"age":       idLines(same, mid, heavy, light),
		"RUN_AFTER": idLines(light, heavy, mid, same),
	}
	for field, want := range cases {
		if err := e.run(t, "list", "-q", "--sort", field); err != nil {
			t.Fatalf("--sort %s: %v", field, err)
		}
		if got := e.stdout.String(); got != want {
			t.Errorf("--sort %s printed %q; want %q", field, got, want)
		}
	}
	err := e.run(t, "list", "--sort", "colour")
	if !errors.As(err, new(*UsageError)) || !strings.Contains(err.Error(), "want one of id, created, status") {
		t.Errorf("--sort colour: %v; want a usage error naming the fields", err)
	}
}

// TestListSortBeforeLimit: --sort orders every matching job before
// --limit keeps the first, so the heaviest jobs are found among more than
// a default page, however old they are.
func TestListSortBeforeLimit(t *testing.T) {
	e := newTestEnv(t)
	var jobs []*engine.Job
	for i := range defaultListLimit + 20 {
		load := 1.0
		switch i {
		case 0:
			load = 7
		case 1:
			load = 9
		case 2:
			load = 8
		}
		jobs = append(jobs, e.insert(t, engine.JobInsertParams{Load: load}))
	}
	if err := e.run(t, "list", "-q", "--sort", "-load", "--limit", "3"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), idLines(jobs[1], jobs[2], jobs[0]); got != want {
		t.Errorf("--sort -load --limit 3 printed %q; want the three heaviest %q", got, want)
	}
	if got, want := e.stderr.String(), "jobctl: showing the first 3 of 120 matching jobs; --limit 0 lists all\n"; got != want {
		t.Errorf("stderr %q; want %q", got, want)
	}
	// The default limit, sorted, holds the heaviest of all too.
	if err := e.run(t, "list", "-q", "--sort", "-load"); err != nil {
		t.Fatal(err)
	}
	if got := strings.SplitN(e.stdout.String(), "\n", 4); len(got) < 4 || got[0]+"\n"+got[1]+"\n"+got[2]+"\n" != idLines(jobs[1], jobs[2], jobs[0]) {
		t.Errorf("--sort -load printed first %q; want the three heaviest", got[:min(3, len(got))])
	}
}

func TestListRunAfterColumn(t *testing.T) {
	e := newTestEnv(t)
	later := time.Now().Add(time.Hour)
	now := e.insert(t, engine.JobInsertParams{})
	delayed := e.insert(t, engine.JobInsertParams{RunAfter: &later})
	e.f.Clock = fixedClock(delayed.CreatedAt.Add(90 * time.Second))

	// On a terminal the default table gains the column when a job waits.
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "list"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("ID  STATUS  TYPE  OPERATION  NODE  LOAD  PROGRESS  AGE    RUN AFTER\n"+
		"%-2d  QUEUED  noop  -          -     1     -         1m30s  -\n"+
		"%-2d  QUEUED  noop  -          -     1     -         1m30s  in 58m\n", now.ID, delayed.ID)
	if got := e.stdout.String(); got != want {
		t.Errorf("terminal list:\n%s\nwant:\n%s", got, want)
	}
	// Once the time has passed, the column goes.
	e.f.Clock = fixedClock(later.Add(time.Second))
	if err := e.run(t, "list", "--limit", "1"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); strings.Contains(got, "RUN AFTER") {
		t.Errorf("terminal list after the start time:\n%s\nwant no RUN AFTER column", got)
	}

	// Piped, the default columns stay as they are; wide has run_after in UTC.
	e.f.IO.OutIsTerminal = false
	if err := e.run(t, "list", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "list"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(e.stdout.String()), "\n") {
		if n := strings.Count(line, "\t"); n != 7 {
			t.Errorf("piped row %q has %d tabs; want the 8 default columns", line, n)
		}
	}
	if err := e.run(t, "list", "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n")
	if len(rows) != 2 {
		t.Fatalf("piped wide list: %q", e.stdout.String())
	}
	runAfter := func(row string) string { return strings.Split(row, "\t")[18] }
	if got, want := runAfter(rows[1]), delayed.RunAfter.UTC().Format(time.RFC3339); got != want {
		t.Errorf("piped wide RUN AFTER %q; want %q", got, want)
	}
	if got := runAfter(rows[0]); got != "" {
		t.Errorf("piped wide RUN AFTER of an undelayed job %q; want empty", got)
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 2345: "2,345", 1234567: "1,234,567"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestListWatchSaysWhenTheLimitCutsItShort(t *testing.T) {
	e := newTestEnv(t)
	e.insert(t, engine.JobInsertParams{})
	b := e.insert(t, engine.JobInsertParams{})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- listRun(ctx, &ListOptions{
			IO: ios, Store: e.f.Store, Clock: e.f.Clock, Watch: true, Interval: 10 * time.Millisecond,
			Filter: engine.JobListParams{Limit: 1}, Output: outputOptions{Quiet: true},
		})
	}()
	const note = "jobctl: showing the newest 1 of 2 matching jobs; --limit 0 lists all\n"
	waitfor.Until(t, 10*time.Second, "the first listing and its note", func() bool { return out.String() == idLines(b) && errOut.String() == note })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended by interruption returned %v; want nil", err)
	}
	if errOut.String() != note {
		t.Errorf("stderr %q; want the note once", errOut.String())
	}
}

func TestListColourOnlyOnAColourTerminal(t *testing.T) {
	e := newTestEnv(t)
	e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFailed)
	e.f.IO.OutIsTerminal = true
	if err := e.run(t, "list"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\x1b[1mID\x1b[m", "\x1b[31mFAILED\x1b[m"} {
		if !strings.Contains(e.stdout.String(), want) {
			t.Errorf("colour terminal list lacks %q:\n%q", want, e.stdout.String())
		}
	}
	for _, setup := range []func(){
		func() { e.f.IO.NoColor = true },
		func() { e.f.IO.OutIsTerminal, e.f.IO.NoColor = false, false },
	} {
		setup()
		if err := e.run(t, "list"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e.stdout.String(), "\x1b") {
			t.Errorf("list without a colour terminal printed escapes: %q", e.stdout.String())
		}
	}
}

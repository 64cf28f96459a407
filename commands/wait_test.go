package commands

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func TestWaitParsing(t *testing.T) {
	ios, _, _ := TestIO("")
	var got *WaitOptions
	cmd := NewCmdWait(&Factory{IO: ios}, func(_ context.Context, o *WaitOptions) error {
		got = o
		return nil
	})
	if err := execParse(cmd, "3", "1", "3", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.IDs, []int64{3, 1}) || got.Timeout.String() != "2m0s" {
		t.Errorf("ids %v timeout %s; want [3 1] (repeats dropped) and 2m", got.IDs, got.Timeout)
	}
	for _, args := range [][]string{{}, {"x"}, {"0"}, {"1", "--timeout", "-1s"}, {"1", "--timeout", "soon"}} {
		cmd := NewCmdWait(&Factory{IO: ios}, func(context.Context, *WaitOptions) error { return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("wait %v: %v; want a UsageError", args, err)
		}
	}
}

func TestWaitSucceeded(t *testing.T) {
	e := newTestEnv(t)
	a := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	b := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusWarning)
	if err := e.run(t, "wait", fmt.Sprint(a.ID), fmt.Sprint(b.ID)); err != nil {
		t.Fatalf("wait on FINISHED and WARNING: %v; want success", err)
	}
	lines := strings.Split(strings.TrimSpace(e.stdout.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], fmt.Sprintf("%d\tFINISHED\t", a.ID)) ||
		!strings.HasPrefix(lines[1], fmt.Sprintf("%d\tWARNING\t", b.ID)) {
		t.Errorf("stdout %q; want one status row per job", e.stdout.String())
	}
}

func TestWaitFailed(t *testing.T) {
	e := newTestEnv(t)
	ok := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	bad := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFailed)
	err := e.run(t, "wait", fmt.Sprint(ok.ID), fmt.Sprint(bad.ID))
	var failed *WaitFailedError
	if !errors.As(err, &failed) || len(failed.Jobs) != 1 || failed.Jobs[0].ID != bad.ID {
		t.Fatalf("error %v; want a WaitFailedError naming job %d", err, bad.ID)
	}
	if want := fmt.Sprintf("job %d ended FAILED (exit code 3)", bad.ID); err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
}

func TestWaitUntilEnd(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	counting := &countingStore{Store: e.store}
	e.f.Store = func(context.Context) (engine.Store, error) { return counting, nil }
	done := make(chan error, 1)
	go func() { done <- e.run(t, "wait", fmt.Sprint(j.ID)) }()
	// End the job only once the wait has seen it running and polled again.
	waitfor.Until(t, 10*time.Second, "the wait to poll", func() bool { return counting.gets.Load() >= 2 })
	e.move(t, j, engine.StatusCancelling, engine.StatusCancelled)
	err := <-done
	var failed *WaitFailedError
	if !errors.As(err, &failed) || failed.Jobs[0].Status != engine.StatusCancelled {
		t.Fatalf("error %v; want the job reported CANCELLED", err)
	}
}

func TestWaitTimeout(t *testing.T) {
	e := newTestEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	err := e.run(t, "wait", fmt.Sprint(j.ID), fmt.Sprint(done.ID), "--timeout", "250ms")
	var timeout *WaitTimeoutError
	if !errors.As(err, &timeout) || !slices.Equal(timeout.Pending, []int64{j.ID}) {
		t.Fatalf("error %v; want a WaitTimeoutError for job %d only", err, j.ID)
	}
	if !strings.HasPrefix(e.stdout.String(), fmt.Sprintf("%d\tQUEUED\t", j.ID)) {
		t.Errorf("stdout %q; want the jobs' states as last seen", e.stdout.String())
	}
}

func TestWaitUnknownJob(t *testing.T) {
	e := newTestEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	if err := e.run(t, "wait", fmt.Sprint(j.ID), "424242"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("error %v; want not found at once", err)
	}
}

// countingStore counts JobGet and JobList calls, to tell when a poller
// has polled.
type countingStore struct {
	engine.Store
	gets, lists atomic.Int64
}

func (s *countingStore) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	s.lists.Add(1)
	return s.Store.JobList(ctx, p)
}

func (s *countingStore) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	s.gets.Add(1)
	return s.Store.JobGet(ctx, id)
}

// asyncRun runs a command line on the environment with streams that are
// safe to read while it writes, stderr counting as a terminal.
func (e *testEnv) asyncRun(t *testing.T, args ...string) (stdout, stderr *syncBuffer, done chan error) {
	t.Helper()
	stdout, stderr, done = &syncBuffer{}, &syncBuffer{}, make(chan error, 1)
	e.f.IO = &IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: stderr, ErrIsTerminal: true}
	root := NewRootCmd(e.f, "test")
	root.SetArgs(args)
	go func() { done <- root.ExecuteContext(context.Background()) }()
	return stdout, stderr, done
}

// report sets a running job's progress as its node would.
func (e *testEnv) report(t *testing.T, j *engine.Job, percent int, message string) {
	t.Helper()
	if err := e.store.JobProgressSet(context.Background(), engine.JobProgressParams{
		ID: j.ID, Attempt: j.Attempt, Node: "n1", Progress: percent, Message: message}); err != nil {
		t.Fatal(err)
	}
}

func TestWaitShowsProgressOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	a := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.report(t, a, 40, "copying")
	stdout, stderr, done := e.asyncRun(t, "wait", fmt.Sprint(a.ID))
	want := fmt.Sprintf("\r\x1b[Kjob %d RUNNING [########------------] 40%% copying · 0s", a.ID)
	waitfor.Until(t, 10*time.Second, "the progress line", func() bool { return stderr.String() == want })
	e.report(t, a, 75, "")
	want += fmt.Sprintf("\r\x1b[Kjob %d RUNNING [###############-----] 75%% · 0s", a.ID)
	waitfor.Until(t, 10*time.Second, "the progress line redrawn", func() bool { return stderr.String() == want })
	e.move(t, e.get(t, a.ID), engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); got != want+"\r\x1b[K" {
		t.Errorf("stderr %q; want the line cleared at the end", got)
	}
	if !strings.HasPrefix(stdout.String(), fmt.Sprintf("%d\tFINISHED\t", a.ID)) {
		t.Errorf("stdout %q; want the final row as when piped", stdout.String())
	}
}

func TestWaitProgressOfSeveralJobs(t *testing.T) {
	e := newTestEnv(t)
	a := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.report(t, a, 40, "copying")
	b := e.insert(t, engine.JobInsertParams{})
	c := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	_, stderr, done := e.asyncRun(t, "wait", fmt.Sprint(a.ID), fmt.Sprint(b.ID), fmt.Sprint(c.ID), "--timeout", "1s")
	// b waits for a node, and no node is registered: the line says so,
	// cut to the 80 columns of a terminal whose width is unknown.
	want := fmt.Sprintf("\r\x1b[K1 of 3 jobs ended · %d RUNNING 40%% · %d QUEUED · 0s · job %d: no node can ever ru…", a.ID, b.ID, b.ID)
	waitfor.Until(t, 10*time.Second, "the progress line", func() bool { return strings.HasPrefix(stderr.String(), want) })
	if err := <-done; !errors.As(err, new(*WaitTimeoutError)) {
		t.Fatalf("wait: %v; want a timeout", err)
	}
	if got := stderr.String(); got != want+"\r\x1b[K" {
		t.Errorf("stderr %q; want one line, drawn once and cleared", got)
	}
}

// tickClock moves on by step at every reading, so what a command does
// after so long happens after so many readings, whatever the machine's
// speed.
type tickClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func TestWaitSaysWhyAJobWaitsOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	e.f.Clock = &tickClock{now: testNow, step: time.Second}
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	_, stderr, done := e.asyncRun(t, "wait", fmt.Sprint(j.ID), "--timeout", "20s")
	waitfor.Until(t, 10*time.Second, "the reason on the progress line", func() bool {
		return regexp.MustCompile(fmt.Sprintf(`\r\x1b\[Kjob %d QUEUED · [0-9.]+s · no node can ever run this job: no node is registered$`, j.ID)).
			MatchString(stderr.String())
	})
	// A node that offers the type comes: the line says where the job goes.
	if _, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://127.0.0.1:1", MaxLoad: 4, MaxJobs: 10, Weight: 100, State: engine.NodeOnline,
		Services: []engine.NodeService{{Type: engine.TypeSleep}}}}); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the new reason on the progress line", func() bool {
		return strings.HasSuffix(stderr.String(), "· node n1 would be offered it first")
	})
	e.move(t, e.get(t, j.ID), engine.StatusRunning, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWaitSaysWhyAJobWaitsWhenPiped(t *testing.T) {
	e := newTestEnv(t)
	// Each reading of the clock is a second: the reason has stood for ten
	// after a few polls.
	e.f.Clock = &tickClock{now: testNow, step: time.Second}
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	counting := &countingStore{Store: e.store}
	e.f.Store = func(context.Context) (engine.Store, error) { return counting, nil }
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	e.f.IO = &IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: stderr}
	done := make(chan error, 1)
	go func() {
		root := NewRootCmd(e.f, "test")
		root.SetArgs([]string{"wait", fmt.Sprint(j.ID)})
		done <- root.ExecuteContext(context.Background())
	}()
	note := regexp.MustCompile(fmt.Sprintf(`^jobctl: job %d still QUEUED after 1[0-9]s: no node can ever run this job: no node is registered\n$`, j.ID))
	waitfor.Until(t, 10*time.Second, "the reason on stderr", func() bool { return note.MatchString(stderr.String()) })
	// It is said once while nothing changes.
	polls := counting.gets.Load()
	waitfor.Until(t, 10*time.Second, "more polls", func() bool { return counting.gets.Load() >= polls+3 })
	if !note.MatchString(stderr.String()) {
		t.Errorf("stderr %q; want the reason said once", stderr.String())
	}
	e.move(t, e.get(t, j.ID), engine.StatusRunning, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !note.MatchString(stderr.String()) || !strings.HasPrefix(stdout.String(), fmt.Sprintf("%d\tFINISHED\t", j.ID)) {
		t.Errorf("stdout %q, stderr %q; want the final row, and the reason said once", stdout.String(), stderr.String())
	}
}

func TestWaitIsQuietWhenPiped(t *testing.T) {
	e := newTestEnv(t)
	a := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.report(t, a, 40, "copying")
	err := e.run(t, "wait", fmt.Sprint(a.ID), "--timeout", "300ms")
	if !errors.As(err, new(*WaitTimeoutError)) || e.stderr.String() != "" {
		t.Errorf("wait piped: %v, stderr %q; want a timeout and nothing drawn", err, e.stderr.String())
	}
}

func TestSubmitWaitOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	stdout, stderr, done := e.asyncRun(t, "submit", "--type", "noop", "--wait")
	var id int64
	waitfor.Until(t, 10*time.Second, "the id", func() bool {
		_, err := fmt.Sscanf(stdout.String(), "%d\n", &id)
		return err == nil
	})
	j := e.move(t, e.get(t, id), engine.StatusRunning)
	e.report(t, j, 50, "half")
	waitfor.Until(t, 10*time.Second, "the progress line", func() bool {
		return strings.HasSuffix(stderr.String(), fmt.Sprintf("job %d RUNNING [##########----------] 50%% half · 0s", id))
	})
	e.move(t, e.get(t, id), engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != fmt.Sprintf("%d\n", id) {
		t.Errorf("stdout %q; want the id alone", got)
	}
	final := regexp.MustCompile(fmt.Sprintf(`\r\x1b\[Kjob %d FINISHED in [0-9.]+m?s \(exit 0\)\n$`, id))
	if got := stderr.String(); !final.MatchString(got) {
		t.Errorf("stderr %q; want the progress cleared and one readable final line", got)
	}
}

func TestJobSummary(t *testing.T) {
	start := testNow
	end := start.Add(3200 * time.Millisecond)
	for _, c := range []struct {
		job  engine.Job
		want string
	}{
		{engine.Job{ID: 42, Status: engine.StatusFinished, StartedAt: &start, FinishedAt: &end, ExitCode: engine.Ptr(0)},
			"job 42 FINISHED in 3.2s (exit 0)"},
		{engine.Job{ID: 7, Status: engine.StatusFailed, StartedAt: &start, FinishedAt: &end, ExitCode: engine.Ptr(3), Message: "exit code 3"},
			"job 7 FAILED in 3.2s (exit 3)"},
		{engine.Job{ID: 8, Status: engine.StatusCancelled, Message: "cancelled by operator"},
			"job 8 CANCELLED (cancelled by operator)"},
		{engine.Job{ID: 9, Status: engine.StatusWarning, StartedAt: &start, FinishedAt: &end, ExitCode: engine.Ptr(0), Message: "disk nearly full"},
			"job 9 WARNING in 3.2s (exit 0; disk nearly full)"},
		{engine.Job{ID: 10, Status: engine.StatusQueued}, "job 10 QUEUED (still waiting)"},
	} {
		if got := jobSummary(&c.job); got != c.want {
			t.Errorf("jobSummary = %q; want %q", got, c.want)
		}
	}
}

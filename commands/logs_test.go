package commands

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func (e *testEnv) appendLog(t *testing.T, id int64, attempt int, data string) {
	t.Helper()
	err := e.store.JobLogAppend(context.Background(), engine.JobLogAppendParams{JobID: id, Attempt: attempt, Data: []byte(data)})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLogs(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning,
		engine.StatusRestart, engine.StatusRunning) // on its second attempt
	e.appendLog(t, j.ID, 1, "first try\n")
	e.appendLog(t, j.ID, 2, "second \x00binary\n")
	if err := e.run(t, "logs", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), "first try\nsecond \x00binary\n"; got != want {
		t.Errorf("logs = %q; want %q", got, want)
	}
	if err := e.run(t, "logs", fmt.Sprint(j.ID), "--attempt", "2"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), "second \x00binary\n"; got != want {
		t.Errorf("logs --attempt 2 = %q; want %q", got, want)
	}
	if err := e.run(t, "logs", "31337"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("logs of an unknown job: %v; want not found", err)
	}
	if err := e.run(t, "logs", fmt.Sprint(j.ID), "--attempt", "-1"); !errors.As(err, new(*UsageError)) {
		t.Errorf("--attempt -1: %v; want a UsageError", err)
	}
}

func TestLogsFollow(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.appendLog(t, j.ID, 1, "one\n")
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- logsRun(context.Background(), &LogsOptions{
			IO: &IOStreams{Out: out, ErrOut: out}, Store: e.f.Store, ID: j.ID, Follow: true, Interval: 10 * time.Millisecond,
		})
	}()
	waitfor.Until(t, 10*time.Second, "the first chunk", func() bool { return out.String() == "one\n" })
	e.appendLog(t, j.ID, 1, "two\n")
	waitfor.Until(t, 10*time.Second, "the second chunk", func() bool { return out.String() == "one\ntwo\n" })
	// Output stored just before the job ends still gets printed.
	e.appendLog(t, j.ID, 1, "three\n")
	e.move(t, j, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\nthree\n" {
		t.Errorf("followed log %q; want every chunk once", got)
	}
	if strings.Count(out.String(), "three") != 1 {
		t.Error("a chunk was printed twice")
	}
}

func TestLogsOfAnAttemptNotMadeIsNotFound(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	err := e.run(t, "logs", fmt.Sprint(j.ID), "--attempt", "2")
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("logs --attempt 2 of a job that ran once: %v; want not found", err)
	}
}

// streamLog stores a log of every stream, each chunk stored strictly after
// the one before on the database's clock, and returns the chunks.
func streamLog(t *testing.T, e *testEnv, id int64) []engine.LogChunk {
	t.Helper()
	ctx := context.Background()
	pieces := []struct {
		stream engine.LogStream
		data   string
	}{
		{engine.LogOutput, "half a li"},
		{engine.LogProtocol, "jobctl:progress 50 half way\n"},
		{engine.LogOutput, "ne\nsecond line\n"},
		{engine.LogNote, "timed out after 1s, sending SIGTERM\n"},
	}
	var last time.Time
	for _, p := range pieces {
		for {
			now, err := e.store.Now(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if now.After(last) {
				break
			}
			runtime.Gosched()
		}
		if err := e.store.JobLogAppend(ctx, engine.JobLogAppendParams{JobID: id, Attempt: 1, Stream: p.stream, Data: []byte(p.data)}); err != nil {
			t.Fatal(err)
		}
		chunks, err := e.store.JobLogList(ctx, engine.JobLogListParams{JobID: id})
		if err != nil {
			t.Fatal(err)
		}
		last = chunks[len(chunks)-1].CreatedAt
	}
	chunks, err := e.store.JobLogList(ctx, engine.JobLogListParams{JobID: id})
	if err != nil {
		t.Fatal(err)
	}
	return chunks
}

// TestLogsStreams: protocol lines and notes are marked on lines of their
// own, --raw leaves the job's own output alone and whole, and --tail,
// --since and --timestamps work on what would be printed.
func TestLogsStreams(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	chunks := streamLog(t, e, j.ID)
	stamp := func(i int) string { return chunks[i].CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00") + " " }
	id := fmt.Sprint(j.ID)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "half a li\n[protocol] jobctl:progress 50 half way\nne\nsecond line\n[note] timed out after 1s, sending SIGTERM\n"},
		{[]string{"--raw"}, "half a line\nsecond line\n"},
		{[]string{"--tail", "2"}, "second line\n[note] timed out after 1s, sending SIGTERM\n"},
		{[]string{"--tail", "1", "--raw"}, "second line\n"},
		{[]string{"--tail", "0"}, ""},
		{[]string{"--tail", "9"}, "half a li\n[protocol] jobctl:progress 50 half way\nne\nsecond line\n[note] timed out after 1s, sending SIGTERM\n"},
		{[]string{"--timestamps"}, stamp(0) + "half a li\n" + stamp(1) + "[protocol] jobctl:progress 50 half way\n" +
			stamp(2) + "ne\n" + stamp(2) + "second line\n" + stamp(3) + "[note] timed out after 1s, sending SIGTERM\n"},
		{[]string{"--timestamps", "--raw"}, stamp(0) + "half a line\n" + stamp(2) + "second line\n"},
		{[]string{"--since", chunks[2].CreatedAt.Format(time.RFC3339Nano)}, "ne\nsecond line\n[note] timed out after 1s, sending SIGTERM\n"},
		{[]string{"--since", chunks[2].CreatedAt.Format(time.RFC3339Nano), "--raw"}, "ne\nsecond line\n"},
	} {
		if err := e.run(t, append([]string{"logs", id}, tc.args...)...); err != nil {
			t.Fatalf("logs %v: %v", tc.args, err)
		}
		if got := e.stdout.String(); got != tc.want {
			t.Errorf("logs %v:\n%q\nwant\n%q", tc.args, got, tc.want)
		}
	}

	// --since as a duration counts back from now.
	e.f.Clock = fixedClock(chunks[3].CreatedAt.Add(10 * time.Minute))
	if err := e.run(t, "logs", id, "--since", "10m"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.stdout.String(), "[note] timed out after 1s, sending SIGTERM\n"; got != want {
		t.Errorf("--since 10m: %q; want %q", got, want)
	}

	for _, args := range [][]string{{"--tail", "-2"}, {"--since", "yesterday-ish"}, {"--tail", "x"}} {
		if err := e.run(t, append([]string{"logs", id}, args...)...); !errors.As(err, new(*UsageError)) {
			t.Errorf("logs %v: %v; want a usage error", args, err)
		}
	}
}

// TestLogsFollowRaw: -f goes on with --raw, --timestamps and --tail.
func TestLogsFollowRaw(t *testing.T) {
	e := newTestEnv(t)
	j := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	e.appendLog(t, j.ID, 1, "one\ntwo\n")
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- logsRun(context.Background(), &LogsOptions{
			IO: &IOStreams{Out: out, ErrOut: out}, Store: e.f.Store, ID: j.ID, Follow: true, Interval: 10 * time.Millisecond,
			Raw: true, Tail: engine.Ptr(1),
		})
	}()
	waitfor.Until(t, 10*time.Second, "the tail", func() bool { return out.String() == "two\n" })
	add := func(stream engine.LogStream, data string) {
		if err := e.store.JobLogAppend(context.Background(), engine.JobLogAppendParams{JobID: j.ID, Attempt: 1, Stream: stream, Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	add(engine.LogProtocol, "jobctl:progress 10\n")
	add(engine.LogOutput, "three\n")
	add(engine.LogNote, "cancelled, sending SIGTERM\n")
	e.move(t, j, engine.StatusFinished)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "two\nthree\n" {
		t.Errorf("followed raw log %q; want the job's own lines", got)
	}
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func startBuiltin(t *testing.T, s Spec, b Builtin, out Output) *Run {
	t.Helper()
	r, err := StartBuiltin(s, b, out)
	if err != nil {
		t.Fatalf("StartBuiltin: %v", err)
	}
	t.Cleanup(func() {
		r.Cancel("test ended", 0)
		<-r.Done()
	})
	return r
}

func TestBuiltinEndings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		builtin Builtin
		want    Result
	}{
		{"noop", Noop, Result{ExitCode: 0, Outcome: Succeeded, Reason: "finished"}},
		{"error", func(context.Context, Spec, *Gate, Output) error { return errors.New("no input") },
			Result{ExitCode: 1, Outcome: Failed, Reason: "no input"}},
		{"final error", func(context.Context, Spec, *Gate, Output) error {
			return fmt.Errorf("step: %w", Final(errors.New("the workflow stops")))
		}, Result{ExitCode: 1, Outcome: FailedFinally, Reason: "step: the workflow stops"}},
		{"panic", func(context.Context, Spec, *Gate, Output) error { panic("boom") },
			Result{ExitCode: 1, Outcome: Failed, Reason: "panic: boom"}},
		{"warning", func(_ context.Context, _ Spec, _ *Gate, out Output) error { out.Warning("slow"); return nil },
			Result{ExitCode: 0, Outcome: SucceededWithWarning, Warning: "slow", Reason: "finished"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := startBuiltin(t, Spec{}, tt.builtin, newRecordingOutput())
			if got := waitDone(t, r); got != tt.want {
				t.Errorf("result = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStartBuiltinRefusesNil(t *testing.T) {
	t.Parallel()
	if _, err := StartBuiltin(Spec{}, nil, newRecordingOutput()); err == nil {
		t.Error("StartBuiltin(nil) succeeded, want an error")
	}
}

func TestSleepReportsProgress(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	r := startBuiltin(t, Spec{Stdin: []byte(`{"duration":"300ms"}`)}, Sleep, out)
	if got := waitDone(t, r); got.Outcome != Succeeded {
		t.Fatalf("result = %+v, want Succeeded", got)
	}
	calls := out.progressCalls()
	if len(calls) == 0 {
		t.Fatal("sleep reported no progress")
	}
	if last := calls[len(calls)-1]; last != (progress{100, "slept 300ms of 300ms"}) {
		t.Errorf("last progress = %+v, want 100%%", last)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].percent <= calls[i-1].percent {
			t.Errorf("progress went from %d to %d", calls[i-1].percent, calls[i].percent)
		}
	}
}

func TestSleepPauseResume(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	r := startBuiltin(t, Spec{Argv: []string{"300ms"}}, Sleep, out)
	if err := r.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if !r.Paused() {
		t.Error("Paused() = false after Pause")
	}
	select {
	case <-r.Done():
		t.Fatalf("a paused 300ms sleep ended: %+v", r.Result())
	case <-time.After(600 * time.Millisecond):
	}
	if err := r.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if got := waitDone(t, r); got.Outcome != Succeeded {
		t.Errorf("result = %+v, want Succeeded", got)
	}
	if log := out.logText(); log != "jobctl: paused\njobctl: resumed\n" {
		t.Errorf("log = %q", log)
	}
}

func TestSleepCancel(t *testing.T) {
	t.Parallel()
	for _, paused := range []bool{false, true} {
		out := newRecordingOutput()
		r := startBuiltin(t, Spec{Argv: []string{"1h"}}, Sleep, out)
		if paused {
			if err := r.Pause(); err != nil {
				t.Fatalf("Pause: %v", err)
			}
		}
		r.Cancel("no longer needed", time.Minute)
		want := Result{ExitCode: -1, Outcome: Cancelled, Reason: "cancelled: no longer needed"}
		if got := waitDone(t, r); got != want {
			t.Errorf("paused %v: result = %+v, want %+v", paused, got, want)
		}
		if log := out.logText(); !strings.HasSuffix(log, "jobctl: cancelled (no longer needed), stopping\n") {
			t.Errorf("paused %v: log = %q", paused, log)
		}
		if r.Paused() {
			t.Errorf("paused %v: Paused() = true after Cancel", paused)
		}
	}
}

func TestSleepTimeout(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	r := startBuiltin(t, Spec{Argv: []string{"1h"}, Timeout: 100 * time.Millisecond}, Sleep, out)
	want := Result{ExitCode: -1, Outcome: TimedOut, Reason: "timed out after 100ms"}
	if got := waitDone(t, r); got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	if log := out.logText(); log != "jobctl: timed out after 100ms, stopping\n" {
		t.Errorf("log = %q", log)
	}
}

func TestPauseWhileStoppingFails(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	// A handler slow to stop keeps the run in its stopping phase.
	slowToStop := func(context.Context, Spec, *Gate, Output) error { <-release; return nil }
	r := startBuiltin(t, Spec{}, slowToStop, newRecordingOutput())
	r.Cancel("stop", time.Minute)
	if err := r.Pause(); !errors.Is(err, ErrStopping) {
		t.Errorf("Pause while stopping = %v, want ErrStopping", err)
	}
	if err := r.Resume(); !errors.Is(err, ErrStopping) {
		t.Errorf("Resume while stopping = %v, want ErrStopping", err)
	}
	close(release)
	if got := waitDone(t, r); got.Outcome != Cancelled {
		t.Errorf("result = %+v, want Cancelled", got)
	}
}

func TestSleepDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    Spec
		want    time.Duration
		wantErr string
	}{
		{"object payload", Spec{Stdin: []byte(`{"duration":"5s"}`)}, 5 * time.Second, ""},
		{"bare string payload", Spec{Stdin: []byte(` "1m30s" `)}, 90 * time.Second, ""},
		{"payload wins over argv", Spec{Stdin: []byte(`{"duration":"2s"}`), Argv: []string{"9s"}}, 2 * time.Second, ""},
		{"argv", Spec{Argv: []string{"250ms"}}, 250 * time.Millisecond, ""},
		{"empty object falls back to argv", Spec{Stdin: []byte(`{}`), Argv: []string{"1s"}}, time.Second, ""},
		{"null falls back to argv", Spec{Stdin: []byte(`null`), Argv: []string{"1s"}}, time.Second, ""},
		{"zero", Spec{Argv: []string{"0s"}}, 0, ""},
		{"nothing", Spec{}, 0, "no duration"},
		{"number", Spec{Stdin: []byte(`{"duration":5}`)}, 0, "payload must be"},
		{"not json", Spec{Stdin: []byte(`5s`)}, 0, "payload must be"},
		{"bad text", Spec{Argv: []string{"soon"}}, 0, `invalid duration "soon"`},
		{"negative", Spec{Argv: []string{"-1s"}}, 0, "negative duration"},
	}
	for _, tt := range tests {
		got, err := SleepDuration(tt.spec)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%s: sleepDuration = %v, %v; want %v", tt.name, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error = %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestSleepInvalidDurationFails(t *testing.T) {
	t.Parallel()
	r := startBuiltin(t, Spec{Argv: []string{"soon"}}, Sleep, newRecordingOutput())
	if got := waitDone(t, r); got.Outcome != Failed || !strings.Contains(got.Reason, "invalid duration") {
		t.Errorf("result = %+v, want Failed with the invalid duration", got)
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	var g Gate
	if err := g.Wait(context.Background()); err != nil {
		t.Fatalf("Wait on an open gate = %v", err)
	}
	paused, changed := g.State()
	if paused {
		t.Fatal("zero Gate is paused")
	}
	g.set(true)
	select {
	case <-changed:
	default:
		t.Fatal("closing the gate did not signal the change")
	}
	paused, changed = g.State()
	g.set(true) // no change
	select {
	case <-changed:
		t.Fatal("setting the same state signalled a change")
	default:
	}
	if !paused {
		t.Fatal("State() = open after set(true)")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a closed gate with a done context = %v, want context.Canceled", err)
	}

	waited := make(chan error, 1)
	go func() { waited <- g.Wait(context.Background()) }()
	g.set(false)
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("Wait after opening = %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Wait did not return when the gate opened")
	}
}

func TestPreparedBuiltinRunsInExecute(t *testing.T) {
	t.Parallel()
	calls := 0
	r, err := PrepareBuiltin(Spec{}, func(context.Context, Spec, *Gate, Output) error { calls++; return nil },
		newRecordingOutput())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
		t.Fatal("a prepared run ended before Execute")
	default:
	}
	r.Execute()
	r.Execute() // a second call does nothing
	if got := waitDone(t, r); got.Outcome != Succeeded || calls != 1 {
		t.Errorf("result = %+v after %d calls of the handler, want Succeeded after 1", got, calls)
	}
}

func TestPreparedBuiltinStoppedBeforeExecuteNeverRuns(t *testing.T) {
	t.Parallel()
	for _, stop := range []struct {
		name   string
		stop   func(*Run)
		reason string
	}{
		{"cancel", func(r *Run) { r.Cancel("operator", 0) }, "cancelled: operator"},
		{"kill", func(r *Run) { r.Kill("lease lost") }, "cancelled: lease lost"},
	} {
		t.Run(stop.name, func(t *testing.T) {
			t.Parallel()
			called := false
			r, err := PrepareBuiltin(Spec{}, func(context.Context, Spec, *Gate, Output) error { called = true; return nil },
				newRecordingOutput())
			if err != nil {
				t.Fatal(err)
			}
			stop.stop(r)
			r.Execute()
			if got := waitDone(t, r); got.Outcome != Cancelled || got.Reason != stop.reason || called {
				t.Errorf("result = %+v, handler called %v; want Cancelled (%s) without a call", got, called, stop.reason)
			}
		})
	}
}

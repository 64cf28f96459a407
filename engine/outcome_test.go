package engine_test

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// fixed is a random source that always returns r.
func fixed(r float64) func() float64 { return func() float64 { return r } }

func TestOutcomeUpdate(t *testing.T) {
	t.Parallel()
	running := &engine.Job{ID: 1, Status: engine.StatusRunning, Version: 3, Attempt: 1, MaxAttempts: 1, Node: "n1"}
	retrying := &engine.Job{ID: 1, Status: engine.StatusRunning, Version: 3, Attempt: 2, MaxAttempts: 3,
		Backoff: engine.Duration(time.Second), Node: "n1"}
	requeued := &engine.Job{ID: 1, Status: engine.StatusRunning, Version: 9, Attempt: 4, AttemptBase: 3, MaxAttempts: 2,
		Backoff: engine.Duration(time.Second), Node: "n1"}
	cancelling := &engine.Job{ID: 1, Status: engine.StatusCancelling, Version: 3, Attempt: 1, MaxAttempts: 3, Node: "n1"}
	tests := []struct {
		name     string
		job      *engine.Job
		res      engine.RunResult
		shutdown bool

		want       engine.Status
		finished   bool
		message    string
		runAfter   float64 // seconds; 0: none
		keepsNode  bool
		exitRecord bool
	}{
		{name: "cancelling ends cancelled whatever the run did", job: cancelling,
			res:  engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit code 0"},
			want: engine.StatusCancelled, finished: true, message: engine.MessageCancelled, keepsNode: true, exitRecord: true},
		{name: "operator cancel", job: cancelling,
			res:  engine.RunResult{ExitCode: -1, Outcome: engine.RunCancelled, Reason: "cancelled: cancelled by operator"},
			want: engine.StatusCancelled, finished: true, message: engine.MessageCancelled, keepsNode: true},
		{name: "node shutdown puts it back", job: retrying, shutdown: true,
			res:  engine.RunResult{ExitCode: -1, Outcome: engine.RunCancelled, Reason: "cancelled: node shutting down"},
			want: engine.StatusRestart, message: engine.MessageNodeStopped},
		{name: "timeout", job: running,
			res:  engine.RunResult{ExitCode: -1, Outcome: engine.RunTimedOut, Reason: "timed out after 1m0s"},
			want: engine.StatusCancelled, finished: true, message: "timed out after 1m0s", keepsNode: true},
		{name: "cancelled by the runner", job: running,
			res:  engine.RunResult{ExitCode: -1, Outcome: engine.RunCancelled, Reason: "cancelled: job was taken"},
			want: engine.StatusCancelled, finished: true, message: "cancelled: job was taken", keepsNode: true},
		{name: "success", job: running,
			res:  engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit code 0"},
			want: engine.StatusFinished, finished: true, message: "exit code 0", keepsNode: true, exitRecord: true},
		{name: "warning", job: running,
			res:  engine.RunResult{Outcome: engine.RunSucceededWithWarning, Warning: "disk almost full", Reason: "exit code 0"},
			want: engine.StatusWarning, finished: true, message: "disk almost full", keepsNode: true, exitRecord: true},
		{name: "retry with backoff", job: retrying,
			res:  engine.RunResult{ExitCode: 2, Outcome: engine.RunFailed, Reason: "exit code 2"},
			want: engine.StatusRestart, message: "exit code 2; retrying in 2s", runAfter: 2, exitRecord: true},
		{name: "retry after a requeue counts from the requeue", job: requeued,
			res:  engine.RunResult{ExitCode: 2, Outcome: engine.RunFailed, Reason: "exit code 2"},
			want: engine.StatusRestart, message: "exit code 2; retrying in 1s", runAfter: 1, exitRecord: true},
		{name: "a failure its handler calls final, with attempts left", job: retrying,
			res:  engine.RunResult{ExitCode: 1, Outcome: engine.RunFailedFinally, Reason: "operation 2 'b' ended FAILED; the workflow stops"},
			want: engine.StatusFailed, finished: true, message: "operation 2 'b' ended FAILED; the workflow stops", keepsNode: true, exitRecord: true},
		{name: "final failure", job: running,
			res:  engine.RunResult{ExitCode: 2, Outcome: engine.RunFailed, Reason: "exit code 2"},
			want: engine.StatusFailed, finished: true, message: "exit code 2", keepsNode: true, exitRecord: true},
		{name: "not startable", job: running,
			res:  engine.RunResult{ExitCode: -1, Outcome: engine.RunFailed, Reason: "cannot start: no such file"},
			want: engine.StatusFailed, finished: true, message: "cannot start: no such file", keepsNode: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 0.5 is the jitter's middle: the delay is the plain doubling.
			u := engine.OutcomeUpdate(tt.job, tt.res, tt.shutdown, fixed(0.5))
			if u.ID != tt.job.ID || u.From != tt.job.Status || u.Version != tt.job.Version {
				t.Errorf("guard = job %d %s v%d, want job %d %s v%d", u.ID, u.From, u.Version, tt.job.ID, tt.job.Status, tt.job.Version)
			}
			if u.To != tt.want || u.MarkFinished != tt.finished {
				t.Errorf("→ %s finished %v, want → %s finished %v", u.To, u.MarkFinished, tt.want, tt.finished)
			}
			if u.Message == nil || *u.Message != tt.message {
				t.Errorf("message %v, want %q", deref(u.Message), tt.message)
			}
			switch {
			case tt.runAfter == 0 && u.RunAfterSeconds != nil:
				t.Errorf("runs after %v s, want no delay", *u.RunAfterSeconds)
			case tt.runAfter != 0 && (u.RunAfterSeconds == nil || *u.RunAfterSeconds != tt.runAfter):
				t.Errorf("runs after %v s, want %v", deref(u.RunAfterSeconds), tt.runAfter)
			}
			if keeps := u.Node == nil; keeps != tt.keepsNode || (!keeps && *u.Node != "") {
				t.Errorf("node %v, want kept %v (else cleared)", deref(u.Node), tt.keepsNode)
			}
			if (u.ExitCode != nil) != tt.exitRecord || (u.ExitCode != nil && *u.ExitCode != tt.res.ExitCode) {
				t.Errorf("exit code %v for a run that exited %d", deref(u.ExitCode), tt.res.ExitCode)
			}
			if err := u.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	middle := fixed(0.5)
	for retry, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second} {
		if got := engine.Backoff(time.Second, retry, middle); got != want {
			t.Errorf("retry %d: %s, want %s", retry, got, want)
		}
	}
	// The jitter spans ±25% of the doubled delay.
	if got := engine.Backoff(4*time.Second, 2, fixed(0)); got != 6*time.Second {
		t.Errorf("lowest jitter: %s, want 6s", got)
	}
	if got := engine.Backoff(4*time.Second, 2, fixed(0.999999)); got <= 9*time.Second || got >= 10*time.Second {
		t.Errorf("highest jitter: %s, want just under 10s", got)
	}
	if got := engine.Backoff(time.Minute, 30, middle); got != engine.MaxBackoff {
		t.Errorf("many retries: %s, want the cap %s", got, engine.MaxBackoff)
	}
	if got := engine.Backoff(time.Hour, 1, fixed(0.999999)); got != engine.MaxBackoff {
		t.Errorf("jitter above the cap: %s, want the cap %s", got, engine.MaxBackoff)
	}
	if got := engine.Backoff(0, 3, middle); got != 0 {
		t.Errorf("no base: %s, want 0", got)
	}
}

package runner

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// recordingWatcher records what a run tells its GroupWatcher.
type recordingWatcher struct {
	mu    sync.Mutex
	calls []string
	pgid  int
}

func (w *recordingWatcher) WatchGroup(pgid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls, w.pgid = append(w.calls, "watch"), pgid
}

func (w *recordingWatcher) ForgetGroup(pgid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pgid != w.pgid {
		w.calls = append(w.calls, "forget another group")
		return
	}
	w.calls = append(w.calls, "forget")
}

func TestKillStopsTheWholeGroupAtOnceEvenWhileCancelling(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	w := &recordingWatcher{}
	// The job ignores SIGTERM: only SIGKILL ends it before the long grace.
	r := start(t, Spec{Argv: []string{"sh", "-c", `trap '' TERM; sleep 1000 & echo "$!"; wait`}, Watcher: w}, out)
	grandchild := grandchildPid(t, out)
	w.mu.Lock()
	watched := slices.Clone(w.calls)
	w.mu.Unlock()
	if !slices.Equal(watched, []string{"watch"}) {
		t.Fatalf("watcher calls once started = %q, want one watch", watched)
	}

	r.Cancel("by operator", time.Hour)
	r.Kill("lease lost")
	got := measuredDone(t, r)
	if want := (Result{ExitCode: -1, Outcome: Cancelled, Reason: "cancelled: by operator"}); got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	waitGone(t, grandchild)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Equal(w.calls, []string{"watch", "forget"}) {
		t.Errorf("watcher calls = %q, want watch then forget of the same group", w.calls)
	}
}

func TestKillStopsABuiltin(t *testing.T) {
	t.Parallel()
	r, err := StartBuiltin(Spec{}, func(ctx context.Context, _ Spec, _ *Gate, _ Output) error {
		<-ctx.Done()
		return ctx.Err()
	}, newRecordingOutput())
	if err != nil {
		t.Fatal(err)
	}
	r.Kill("lease lost")
	if got := waitDone(t, r); got.Outcome != Cancelled || got.Reason != "cancelled: lease lost" {
		t.Errorf("result = %+v, want Cancelled: lease lost", got)
	}
}

// blockingWatcher holds the run's end in ForgetGroup until released, as a
// node frozen between its job's exit and reading it would.
type blockingWatcher struct {
	forgetting chan struct{}
	release    chan struct{}
}

func (w *blockingWatcher) WatchGroup(int) {}

func (w *blockingWatcher) ForgetGroup(int) {
	close(w.forgetting)
	<-w.release
}

// A process that ended on its own keeps its result: Kill, arriving before
// the end is read, stops nothing and says so.
func TestKillLeavesAProcessThatEndedOnItsOwn(t *testing.T) {
	t.Parallel()
	w := &blockingWatcher{forgetting: make(chan struct{}), release: make(chan struct{})}
	r := start(t, Spec{Argv: []string{"true"}, Watcher: w}, newRecordingOutput())
	<-w.forgetting
	if r.Kill("lease lost") {
		t.Error("Kill reported stopping a process that had already exited")
	}
	close(w.release)
	if got := waitDone(t, r); got.Outcome != Succeeded || got.ExitCode != 0 {
		t.Errorf("result = %+v, want the process's own success", got)
	}
}

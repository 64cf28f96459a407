package waitfor

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestWithinReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	held := Within(time.Minute, func() bool { return polls.Add(1) == 3 })
	if !held {
		t.Fatal("Within gave up on a condition that came true")
	}
	if n := polls.Load(); n != 3 {
		t.Errorf("polled %d times; want 3, the poll it held on being the last", n)
	}
}

func TestWithinChecksAtOnce(t *testing.T) {
	t.Parallel()
	polls := 0
	if !Within(0, func() bool { polls++; return true }) {
		t.Fatal("a condition true at once was not seen")
	}
	if polls != 1 {
		t.Errorf("polled %d times; want 1", polls)
	}
}

func TestWithinGivesUpAfterTheLimit(t *testing.T) {
	t.Parallel()
	polls := 0
	if Within(20*time.Millisecond, func() bool { polls++; return false }) {
		t.Fatal("Within reported a condition that never held")
	}
	if polls < 2 {
		t.Errorf("polled %d times before giving up; want it polled again before the limit", polls)
	}
}

func TestUntilFailsNamingWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	rec := &fatalRecorder{}
	done := make(chan struct{})
	go func() { // Fatalf ends the goroutine, as it does a test's
		defer close(done)
		Until(rec, time.Millisecond, "the moon", func() bool { return false })
	}()
	<-done
	if want := "waited 1ms in vain for the moon"; rec.msg != want {
		t.Errorf("failed with %q; want %q", rec.msg, want)
	}
}

// fatalRecorder records a Fatalf and ends its goroutine, as testing.T does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

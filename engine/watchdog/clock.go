package watchdog

import "time"

// Clock is the watchdog's time: readings of a monotonic clock and timers.
// Tests pass one they move by hand.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer fires once on C unless stopped first.
type Timer interface {
	C() <-chan time.Time
	Stop()
}

// SystemClock is the real clock; time.Now carries a monotonic reading, so
// deadlines do not move when the wall clock is set.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer starts a real timer.
func (SystemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop()               { t.t.Stop() }

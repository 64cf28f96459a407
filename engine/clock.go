package engine

import "time"

// Clock is the time source of the runtime parts; tests and the simulator
// pass a fixed or virtual one. Lease and job timestamps use the database's
// clock instead (Store.Now), never this one.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns the current wall-clock time.
func (SystemClock) Now() time.Time { return time.Now() }

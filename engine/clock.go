package engine

import (
	"sync"
	"time"
)

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

// VirtualClock is a clock that moves only when told to: the simulator's
// time, and the fixed time of tests. It is safe for concurrent use.
type VirtualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewVirtualClock returns a clock that reads start until moved.
func NewVirtualClock(start time.Time) *VirtualClock { return &VirtualClock{now: start} }

// Now returns the clock's time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (a negative d is ignored: time
// never runs backwards).
func (c *VirtualClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t if t is later than its time.
func (c *VirtualClock) Set(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
}

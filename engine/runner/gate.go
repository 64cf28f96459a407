package runner

import (
	"context"
	"sync"
)

// Gate is how a builtin handler honours pause: the runner closes the gate on
// Pause and opens it on Resume. The zero Gate is open.
type Gate struct {
	mu      sync.Mutex
	paused  bool
	changed chan struct{} // closed, and replaced, at every change
}

// State reports whether the gate is closed now, and a channel that is closed
// at its next change, so a handler can wait for work and a pause at once.
func (g *Gate) State() (paused bool, changed <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.paused, g.changed
}

// Wait returns nil once the gate is open, or ctx's error if ctx ends first.
func (g *Gate) Wait(ctx context.Context) error {
	for {
		paused, changed := g.State()
		if !paused {
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// set closes (paused) or opens the gate; setting the current state does nothing.
func (g *Gate) set(paused bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused == paused {
		return
	}
	g.paused = paused
	if g.changed != nil {
		close(g.changed)
	}
	g.changed = make(chan struct{})
}

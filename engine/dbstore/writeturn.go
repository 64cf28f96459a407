package dbstore

import "sync"

// writeTurn gives this process's writes the database's one writer
// (dialect.oneWriter) one at a time, in the order they asked, except that
// an urgent write goes next, ahead of every write waiting: it waits for
// the write in progress only. The node's liveness and the lease are
// urgent, so a queue of job work, however long, never makes a node miss
// its node lease or a dispatcher its renewal. The zero value is free.
type writeTurn struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{} // waiting urgent writes, oldest first
	queued []chan struct{} // the other waiting writes, oldest first
}

// take returns once the caller has the turn; release gives it on.
func (w *writeTurn) take(urgent bool) {
	w.mu.Lock()
	if !w.held {
		w.held = true
		w.mu.Unlock()
		return
	}
	turn := make(chan struct{})
	if urgent {
		w.urgent = append(w.urgent, turn)
	} else {
		w.queued = append(w.queued, turn)
	}
	w.mu.Unlock()
	<-turn
}

// release hands the turn to the next waiting write, urgent ones first, or
// frees it.
func (w *writeTurn) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	var next chan struct{}
	switch {
	case len(w.urgent) > 0:
		next, w.urgent = w.urgent[0], w.urgent[1:]
	case len(w.queued) > 0:
		next, w.queued = w.queued[0], w.queued[1:]
	default:
		w.held = false
		return
	}
	close(next) // the turn stays held: next has it now
}

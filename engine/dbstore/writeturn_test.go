package dbstore

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// TestWriteTurnOrder: writes take the turn in the order they asked, except
// that urgent ones go next, ahead of every write waiting, in their own
// order.
func TestWriteTurnOrder(t *testing.T) {
	t.Parallel()
	var (
		w     writeTurn
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	w.take(false) // the write in progress
	for i, n := range []struct {
		name   string
		urgent bool
	}{{"q1", false}, {"q2", false}, {"u1", true}, {"q3", false}, {"u2", true}} {
		wg.Go(func() {
			w.take(n.urgent)
			mu.Lock()
			order = append(order, n.name)
			mu.Unlock()
			w.release()
		})
		// Each asks only once the one before waits, so the order of
		// asking is known.
		waitfor.Until(t, time.Minute, "write "+n.name+" to wait", func() bool {
			u, q := w.waiting()
			return u+q == i+1
		})
	}
	w.release()
	wg.Wait()
	if want := []string{"u1", "u2", "q1", "q2", "q3"}; !slices.Equal(order, want) {
		t.Errorf("turns in order %v, want %v", order, want)
	}
	w.take(true) // free again: taken at once
	w.release()
}

// waiting counts the writes waiting for the turn, urgent and not.
func (w *writeTurn) waiting() (urgent, queued int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.urgent), len(w.queued)
}

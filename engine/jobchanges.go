package engine

import (
	"context"
	"sync"
	"sync/atomic"
)

// JobChangeFeed fans one process's job changes out to every subscriber: the
// in-process half of a JobChangeNotifier. Signal never blocks, so a writer
// is never held up by a dispatcher that is busy with a round; a subscriber
// that has not read yet gets one value however many changes happened
// meanwhile. The zero value is ready to use.
type JobChangeFeed struct {
	// subscribed lets Signal skip the lock when nobody listens, which is
	// every write of a CLI command and of the simulator.
	subscribed atomic.Int64
	mu         sync.Mutex
	subs       map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives a value after Signal, until
// ctx ends. The channel is never closed.
func (f *JobChangeFeed) Subscribe(ctx context.Context) <-chan struct{} {
	c := make(chan struct{}, 1)
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[chan struct{}]struct{}{}
	}
	f.subs[c] = struct{}{}
	f.subscribed.Add(1)
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.subs, c)
		f.subscribed.Add(-1)
		f.mu.Unlock()
	})
	return c
}

// Signal tells every subscriber that jobs changed.
func (f *JobChangeFeed) Signal() {
	if f.subscribed.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.subs {
		select {
		case c <- struct{}{}:
		default: // a value is pending already: coalesced
		}
	}
}

// Subscribers counts the subscriptions whose context has not ended yet.
func (f *JobChangeFeed) Subscribers() int { return int(f.subscribed.Load()) }

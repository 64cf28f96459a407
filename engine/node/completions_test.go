package node

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// Results added from many runs at once are each written once, in batches
// no larger than the batcher's bound.
func TestCompletionsAreWrittenOnceInBoundedBatches(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		sizes   []int
		written = map[int]int{}
		all     sync.WaitGroup
	)
	b := newCompletionBatcher(func(batch []completion) ([]completion, error) {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(batch))
		for _, c := range batch {
			written[c.run.attempt]++
			all.Done()
		}
		return nil, nil
	}, func(c completion) { t.Errorf("gave up on %d", c.run.attempt) }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.max = 100
	const count = 1000
	all.Add(count)
	var adders sync.WaitGroup
	for w := range 4 {
		adders.Go(func() {
			for i := w; i < count; i += 4 {
				b.add(completion{run: &activeRun{attempt: i}, deadline: time.Now().Add(time.Minute)})
			}
		})
	}
	adders.Wait()
	all.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, n := range sizes {
		if n < 1 || n > b.max {
			t.Errorf("a batch of %d, want 1 to %d", n, b.max)
		}
	}
	for i := range count {
		if written[i] != 1 {
			t.Errorf("result %d written %d times, want once", i, written[i])
		}
	}
}

// A batch the store does not take is tried again, without the results whose
// patience ran out meanwhile.
func TestCompletionsAreRetriedWithinTheirPatience(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls [][]int
	done := make(chan struct{})
	var gaveUp []int
	b := newCompletionBatcher(func(batch []completion) ([]completion, error) {
		mu.Lock()
		defer mu.Unlock()
		var ids []int
		for _, c := range batch {
			ids = append(ids, c.run.attempt)
		}
		calls = append(calls, ids)
		if len(calls) == 1 {
			return batch, errors.New("database went away")
		}
		close(done)
		return nil, nil
	}, func(c completion) {
		mu.Lock()
		gaveUp = append(gaveUp, c.run.attempt)
		mu.Unlock()
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.flushNow() // both in the first batch, with no linger
	b.mu.Lock()  // queued together, before the writer looks
	b.queue = []completion{
		{run: &activeRun{attempt: 1}, deadline: time.Now()}, // out of patience by the retry
		{run: &activeRun{attempt: 2}, deadline: time.Now().Add(time.Minute)},
	}
	b.writing = true
	b.mu.Unlock()
	go b.run()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || len(calls[0]) != 2 || len(calls[1]) != 1 || calls[1][0] != 2 {
		t.Errorf("writes %v, want [1 2] then [2]", calls)
	}
	if len(gaveUp) != 1 || gaveUp[0] != 1 {
		t.Errorf("gave up on %v, want [1]", gaveUp)
	}
}

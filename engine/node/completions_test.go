package node

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// testCompletion is a result of attempt i of a job of its own.
func testCompletion(i int) *completion {
	return &completion{run: &activeRun{job: &engine.Job{ID: int64(i + 1)}, attempt: i}}
}

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
	b := newCompletionBatcher(func(batch []*completion) ([]*completion, error) {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(batch))
		for _, c := range batch {
			written[c.run.attempt]++
			all.Done()
		}
		return nil, nil
	}, func(c *completion) { t.Errorf("kept %d on disk while the store answers", c.run.attempt) },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.max = 100
	const count = 1000
	all.Add(count)
	var adders sync.WaitGroup
	for w := range 4 {
		adders.Go(func() {
			for i := w; i < count; i += 4 {
				b.add(testCompletion(i))
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

// A batch the store does not take is tried again, however often it fails,
// first in line; every result waiting is kept on disk once a try failed,
// also one queued behind the failed batch that was never tried; and the
// node says once that the database is away and once that it is back.
func TestCompletionsAreRetriedUntilTheStoreTakesThem(t *testing.T) {
	t.Parallel()
	const failures = 50
	var (
		mu    sync.Mutex
		tries [][]int
		kept  = map[int]int{}
		done  = make(chan struct{})
		log   logBuffer
	)
	var b *completionBatcher
	b = newCompletionBatcher(func(batch []*completion) ([]*completion, error) {
		mu.Lock()
		defer mu.Unlock()
		var ids []int
		for _, c := range batch {
			ids = append(ids, c.run.attempt)
		}
		tries = append(tries, ids)
		if len(tries) == 1 {
			b.add(testCompletion(3)) // arrives while the first try fails
		}
		if len(tries) <= failures {
			return batch, errors.New("database went away")
		}
		close(done)
		return nil, nil
	}, func(c *completion) {
		mu.Lock()
		kept[c.run.attempt]++
		mu.Unlock()
	}, slog.New(slog.NewTextHandler(&log, nil)))
	b.minDelay, b.maxDelay = time.Microsecond, time.Microsecond
	b.flushNow() // both in the first batch, with no linger
	b.mu.Lock()  // queued together, before the writer looks
	b.queue = []*completion{testCompletion(1), testCompletion(2)}
	b.writing = true
	b.mu.Unlock()
	go b.run()
	<-done
	for writing := true; writing; time.Sleep(time.Millisecond) { // the writer ends once it has said so
		b.mu.Lock()
		writing = b.writing
		b.mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tries) != failures+1 {
		t.Fatalf("%d tries, want %d", len(tries), failures+1)
	}
	if got := tries[0]; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("first try %v, want [1 2]", got)
	}
	for _, got := range tries[1:] {
		if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
			t.Fatalf("a retry wrote %v, want [1 2 3]: the failed results first, then the one that came after", got)
		}
	}
	for _, i := range []int{1, 2, 3} {
		if kept[i] == 0 {
			t.Errorf("result %d was never kept on disk", i)
		}
	}
	out := log.String()
	if n := strings.Count(out, "cannot record job results"); n != 1 {
		t.Errorf("said %d times that results cannot be recorded, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "recording job results again") {
		t.Errorf("did not say that results get through again:\n%s", out)
	}
}

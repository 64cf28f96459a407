package node

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine/runner"
)

// How results are batched: the first result of an idle batcher waits up to
// completionLinger for others, and one store call records at most
// completionBatchMax. A burst of short jobs then costs a store call per
// batch instead of one per job; a lone result waits only the linger. The
// most is a page of a dispatch round (dispatch.DefaultPageSize), which the
// SQL stores take in one chunk of transitions.
const (
	completionLinger   = 2 * time.Millisecond
	completionBatchMax = 2000
)

// How results the database does not take are retried: for as long as it
// takes, each try given resultTryTimeout, the pause between tries doubling
// from retryMinDelay to retryMaxDelay — less with a short node lease, so a
// node reports its results well within the one node lease a dispatcher
// gives it after an outage.
const (
	resultTryTimeout = 30 * time.Second
	retryMinDelay    = 100 * time.Millisecond
	retryMaxDelay    = 2 * time.Second
)

// completion is a run's result waiting to be recorded.
type completion struct {
	run     *activeRun
	result  runner.Result
	endedAt time.Time
	// lease is how the run's end stood to the node lease (fence.endedBeforeLapse).
	lease runEndLease
	// alone: its job changed since the run started, so it is recorded on
	// its own, reading the job first. Set before it is handed back to the
	// batcher, which is what makes it safe to read there.
	alone bool
	// logPending: the end of the run's log is not stored yet; it is tried
	// again before the result.
	logPending bool

	// Guarded by the spool's lock.
	file    string // its spool file; "" while it is in memory only
	settled bool   // recorded or dropped: never to go to disk again
}

// completionBatcher holds every result not yet recorded and hands them to
// write in batches. It has no goroutine while idle: the first result starts
// a writer, which ends once nothing is left, so nothing needs stopping.
//
// A result is never given up: when a try fails the database is away, and
// the results tried, and all waiting behind them, are retried until the
// database takes them (or fencing rejects them) and meanwhile kept on disk
// (keep) so they outlive the process.
type completionBatcher struct {
	// write records a batch; when the store does not answer it returns the
	// completions to try again and the error.
	write func(batch []*completion) ([]*completion, error)
	// keep puts a result that waits for the database on disk; it is called
	// again for results already there, and must then do nothing.
	keep  func(*completion)
	spool *resultSpool
	log   *slog.Logger

	linger             time.Duration
	max                int
	minDelay, maxDelay time.Duration
	pause              func(time.Duration) // between tries; tests hold it

	mu      sync.Mutex
	queue   []*completion            // not tried yet
	retry   []*completion            // tried, and waiting for the database
	held    map[*completion]struct{} // every result not settled
	writing bool                     // a writer goroutine is running
	outage  bool                     // the last try failed

	full      chan struct{} // max results are waiting: the linger is over
	hurry     chan struct{} // closed on shutdown: no more lingering
	hurryOnce sync.Once
}

func newCompletionBatcher(write func([]*completion) ([]*completion, error), keep func(*completion), log *slog.Logger) *completionBatcher {
	return &completionBatcher{write: write, keep: keep, spool: newResultSpool("", "", log), log: log,
		linger: completionLinger, max: completionBatchMax, minDelay: retryMinDelay, maxDelay: retryMaxDelay, pause: pause,
		held: map[*completion]struct{}{}, full: make(chan struct{}, 1), hurry: make(chan struct{})}
}

// add queues a result, starting a writer if none runs.
func (b *completionBatcher) add(c *completion) {
	b.mu.Lock()
	b.queue = append(b.queue, c)
	b.held[c] = struct{}{}
	idle := !b.writing
	b.writing = true
	full := len(b.queue) >= b.max
	b.mu.Unlock()
	if full {
		select {
		case b.full <- struct{}{}:
		default: // already told
		}
	}
	if idle {
		go b.run()
	}
}

// again takes back a result whose own try failed (recordAlone).
func (b *completionBatcher) again(c *completion, err error) {
	b.mu.Lock()
	b.retry = append(b.retry, c)
	idle := !b.writing
	b.writing = true
	b.mu.Unlock()
	b.stalled(nil, err)
	if idle {
		go b.run()
	}
}

// release forgets a settled result.
func (b *completionBatcher) release(c *completion) {
	b.mu.Lock()
	delete(b.held, c)
	b.mu.Unlock()
}

// flushNow ends lingering for good: a node shutting down records results
// as they come.
func (b *completionBatcher) flushNow() {
	b.hurryOnce.Do(func() { close(b.hurry) })
}

// run is the writer: after the linger it records batches until nothing is
// left. Results that arrive while a batch is written wait no further.
func (b *completionBatcher) run() {
	t := time.NewTimer(b.linger)
	select {
	case <-t.C:
	case <-b.full:
	case <-b.hurry:
	}
	t.Stop()
	delay := b.minDelay
	for {
		batch, waiting := b.next()
		if batch == nil {
			return
		}
		tried, err := b.write(batch)
		if err == nil {
			b.through(waiting)
			delay = b.minDelay
			continue
		}
		b.stalled(tried, err)
		b.pause(delay)
		delay = min(2*delay, b.maxDelay)
	}
}

func pause(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
}

// next takes the next batch, the results tried before first, and says
// how many results wait in all; nil, with the writer marked gone, when
// there is none.
func (b *completionBatcher) next() ([]*completion, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.retry)+len(b.queue), b.max)
	if n == 0 {
		b.writing = false
		return nil, 0
	}
	batch := make([]*completion, 0, n)
	k := min(len(b.retry), n)
	batch = append(batch, b.retry[:k]...)
	b.retry = slices.Delete(b.retry, 0, k) // clears the tail: no settled result stays referenced
	k = n - k
	batch = append(batch, b.queue[:k]...)
	b.queue = slices.Delete(b.queue, 0, k)
	select {
	case <-b.full: // this batch answers it
	default:
	}
	return batch, len(b.held)
}

// stalled puts the results of a failed try back first in line. The
// database is away: they and every result waiting behind them go to disk,
// and the node says so once per outage, not once per result or try.
func (b *completionBatcher) stalled(tried []*completion, err error) {
	b.mu.Lock()
	b.retry = append(tried, b.retry...)
	first := !b.outage
	b.outage = true
	waiting := make([]*completion, 0, len(b.retry)+len(b.queue))
	waiting = append(append(waiting, b.retry...), b.queue...)
	b.mu.Unlock()
	if first {
		b.log.Warn("cannot record job results; keeping them until the database takes them",
			"results", len(waiting), "err", err)
	}
	for _, c := range waiting {
		b.keep(c)
	}
}

// through notes a try that worked; the first after an outage says so, and
// how many results were waiting.
func (b *completionBatcher) through(waiting int) {
	b.mu.Lock()
	was := b.outage
	b.outage = false
	b.mu.Unlock()
	if was {
		b.log.Info("recording job results again", "results", waiting)
	}
}

// keepAll puts every result not yet recorded on disk, for a node about to
// stop; it returns how many wait there and how many could not be written.
func (b *completionBatcher) keepAll() (onDisk, lost int) {
	b.mu.Lock()
	all := make([]*completion, 0, len(b.held))
	for c := range b.held {
		all = append(all, c)
	}
	b.mu.Unlock()
	for _, c := range all {
		b.keep(c)
		if b.spool.onDisk(c) {
			onDisk++
		} else {
			lost++
		}
	}
	return onDisk, lost
}

package node

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// How results are batched: the first result of an idle batcher waits up to
// completionLinger for others, and one store call records at most
// completionBatchMax. A burst of short jobs then costs a store call per
// batch instead of one per job; a lone result waits only the linger.
const (
	completionLinger   = 2 * time.Millisecond
	completionBatchMax = 500
)

// completion is a run's result waiting to be recorded.
type completion struct {
	run      *activeRun
	result   runner.Result
	deadline time.Time // when the node gives up recording it
}

// completionBatcher collects results and hands them to write in batches.
// It has no goroutine while idle: the first result starts a writer, which
// ends once nothing is left, so nothing needs stopping.
type completionBatcher struct {
	// write records a batch; when the store does not answer it returns the
	// completions to try again and the error.
	write func(batch []completion) ([]completion, error)
	// giveUp is told of a completion whose deadline passed unrecorded.
	giveUp func(completion)
	log    *slog.Logger
	linger time.Duration
	max    int

	mu      sync.Mutex
	queue   []completion
	writing bool // a writer goroutine is running

	full      chan struct{} // max results are waiting: the linger is over
	hurry     chan struct{} // closed on shutdown: no more lingering
	hurryOnce sync.Once
}

func newCompletionBatcher(write func([]completion) ([]completion, error), giveUp func(completion), log *slog.Logger) *completionBatcher {
	return &completionBatcher{write: write, giveUp: giveUp, log: log, linger: completionLinger, max: completionBatchMax,
		full: make(chan struct{}, 1), hurry: make(chan struct{})}
}

// add queues a result, starting a writer if none runs.
func (b *completionBatcher) add(c completion) {
	b.mu.Lock()
	b.queue = append(b.queue, c)
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

// flushNow ends lingering for good: a node shutting down records results
// as they come.
func (b *completionBatcher) flushNow() {
	b.hurryOnce.Do(func() { close(b.hurry) })
}

// run is the writer: after the linger it records batches until the queue
// is empty. Results that arrive while a batch is written wait no further.
func (b *completionBatcher) run() {
	t := time.NewTimer(b.linger)
	select {
	case <-t.C:
	case <-b.full:
	case <-b.hurry:
	}
	t.Stop()
	for {
		batch := b.next()
		if batch == nil {
			return
		}
		b.record(batch)
	}
}

// next takes the next batch off the queue; nil, with the writer marked
// gone, when there is none.
func (b *completionBatcher) next() []completion {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.queue), b.max)
	if n == 0 {
		b.writing = false
		return nil
	}
	batch := slices.Clone(b.queue[:n])
	b.queue = append(b.queue[:0], b.queue[n:]...)
	select {
	case <-b.full: // this batch answers it
	default:
	}
	return batch
}

// record writes one batch, retrying what the store did not take while
// each result's deadline allows, with the backoff of a single result.
func (b *completionBatcher) record(batch []completion) {
	delay := 100 * time.Millisecond
	for len(batch) > 0 {
		retry, err := b.write(batch)
		if err == nil {
			return
		}
		b.log.Warn("cannot record job results yet; retrying", "jobs", len(retry), "in", delay, "err", err)
		t := time.NewTimer(delay)
		<-t.C
		delay = min(2*delay, 5*time.Second)
		now := time.Now()
		batch = slices.DeleteFunc(retry, func(c completion) bool {
			if now.Before(c.deadline) {
				return false
			}
			b.giveUp(c)
			return true
		})
	}
}

// recordBatch writes a batch of results in one store call, each guarded by
// the job as its run started (RUNNING, the version the start left). A result
// whose job changed since then is recorded alone (recordAlone), which reads
// the job and decides anew; a fenced run's result is dropped.
func (n *Runtime) recordBatch(batch []completion) ([]completion, error) {
	type pending struct {
		c completion
		u engine.JobUpdate
	}
	writes := make([]pending, 0, len(batch))
	var dropped []completion
	n.mu.Lock()
	for _, c := range batch {
		if c.run.fenced {
			dropped = append(dropped, c)
			continue
		}
		writes = append(writes, pending{c, n.outcomeUpdate(c.run.job, c.run, c.result, c.run.shutdown)})
	}
	n.mu.Unlock()
	for _, c := range dropped {
		n.logDropped(c.run, c.result)
		n.forget(c.run.job.ID, c.run)
	}
	if len(writes) == 0 {
		return nil, nil
	}
	us := make([]engine.JobUpdate, len(writes))
	last := writes[0].c.deadline
	for k, w := range writes {
		us[k] = w.u
		if w.c.deadline.After(last) {
			last = w.c.deadline
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), last)
	defer cancel()
	results, err := n.store.JobUpdateManyQuiet(ctx, us)
	if err != nil {
		retry := make([]completion, len(writes))
		for k, w := range writes {
			retry[k] = w.c
		}
		return retry, err
	}
	for k, w := range writes {
		if results[k].Err != nil {
			go n.recordAlone(w.c)
			continue
		}
		n.recorded(w.c.run, w.u, w.c.result)
		n.forget(w.c.run.job.ID, w.c.run)
	}
	return nil, nil
}

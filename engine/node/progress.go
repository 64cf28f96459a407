package node

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// progressInterval is how often at most a job's progress is written: often
// enough for a person watching, rare enough that a node full of jobs
// reporting progress costs the database little.
const progressInterval = 500 * time.Millisecond

// progressWriter stores the progress running jobs report, for all of the
// node's jobs together: the latest value of each job is kept, and a round
// writes what is pending one job after the other on one connection, at
// most one round per interval, and after a long round (thousands of jobs
// reporting) a pause of four times its length, so progress never takes more
// than a fifth of that connection's time. No goroutine runs while no
// progress is pending, so jobs that report none (noop bursts) cost nothing
// here.
// Progress is stored whether or not the job logs anything.
type progressWriter struct {
	store    progressStore
	log      *slog.Logger
	interval time.Duration

	// writing is held by a round and by a final write, so an older value
	// of a job never lands after a newer one.
	writing sync.Mutex

	mu        sync.Mutex
	pending   map[int64]engine.JobProgressParams
	scheduled bool          // a round is due or running
	last      time.Time     // when the last round began
	took      time.Duration // how long the last round wrote
	failing   bool          // the last write failed and was reported
}

// progressStore is what the progress writer writes.
type progressStore interface {
	JobProgressSet(ctx context.Context, p engine.JobProgressParams) error
}

func newProgressWriter(store progressStore, log *slog.Logger, interval time.Duration) *progressWriter {
	return &progressWriter{store: store, log: log, interval: interval, pending: map[int64]engine.JobProgressParams{}}
}

// Set records a job's latest progress for the next round.
func (w *progressWriter) Set(p engine.JobProgressParams) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[p.ID] = p
	w.scheduleLocked()
}

// scheduleLocked starts a round once the interval since the last one has
// passed, unless one is due already.
func (w *progressWriter) scheduleLocked() {
	if w.scheduled || len(w.pending) == 0 {
		return
	}
	w.scheduled = true
	gap := max(w.interval, w.took*5)
	time.AfterFunc(max(gap-time.Since(w.last), 0), w.round)
}

// round writes every pending progress.
func (w *progressWriter) round() {
	w.writing.Lock()
	w.mu.Lock()
	batch := w.pending
	w.pending = map[int64]engine.JobProgressParams{}
	w.last = time.Now()
	w.mu.Unlock()
	ids := slices.Sorted(maps.Keys(batch))
	for i, id := range ids {
		if err := w.write(batch[id]); err != nil {
			// A failing database fails the rest too: they wait for the
			// next round, unless a newer value came meanwhile, rather
			// than each waiting out its own timeout now.
			w.mu.Lock()
			for _, id := range ids[i:] {
				if _, newer := w.pending[id]; !newer {
					w.pending[id] = batch[id]
				}
			}
			w.mu.Unlock()
			break
		}
	}
	w.writing.Unlock()
	w.mu.Lock()
	w.took = time.Since(w.last)
	w.scheduled = false
	w.scheduleLocked()
	w.mu.Unlock()
}

// Flush writes the job's pending progress now: the last value a run
// reported is stored before its result, which ends the attempt's right to
// report any.
func (w *progressWriter) Flush(id int64) {
	w.writing.Lock()
	defer w.writing.Unlock()
	w.mu.Lock()
	p, ok := w.pending[id]
	delete(w.pending, id)
	w.mu.Unlock()
	if ok {
		_ = w.write(p) // a failure is logged; the result that follows matters more
	}
}

// write stores one progress. A job that moved on (ended, taken from this
// node) no longer takes progress; that is no error.
func (w *progressWriter) write(p engine.JobProgressParams) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w.store.JobProgressSet(ctx, p)
	if errors.Is(err, engine.ErrConflict) {
		err = nil
	}
	w.mu.Lock()
	wasFailing := w.failing
	w.failing = err != nil
	w.mu.Unlock()
	switch {
	case err != nil && !wasFailing:
		w.log.Warn("storing job progress failed; keeping it for the next try", "job", p.ID, "err", err)
	case err == nil && wasFailing:
		w.log.Info("storing job progress works again")
	}
	return err
}

package bench

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// insertBatch is how many jobs one bulk insert carries: large enough that a
// round trip costs little per job, small enough that a run reports progress
// and notices an interrupt while it inserts.
const insertBatch = 1000

// minBacklog is the least a run without a rate keeps queued; see backlogFor.
const minBacklog = 1000

// backlogFor is how many jobs a run without a rate keeps waiting: twice what
// the nodes can run at once, and twice what ends between two looks at the
// counts at the rate jobs end now (gap, a second at least). The run learns
// how many jobs ended only when it looks, and between two looks it counts
// on that rate (run.waiting): a second's worth, with a look a second, left
// the queue empty before the next look, and a run measured how fast it
// refilled the queue instead of the engine. The backlog is bounded all the
// same, so the queue does not grow for as long as inserts outpace the
// engine, which would measure the growing queue instead.
func backlogFor(capacity int, rate float64, gap time.Duration) int {
	return max(minBacklog, 2*capacity, int(2*rate*max(gap, time.Second).Seconds()))
}

// jobInserter inserts jobs in batches (Store.JobInsertMany).
type jobInserter interface {
	JobInsertMany(ctx context.Context, ps []engine.JobInsertParams) ([]int64, error)
}

// feeder inserts the benchmark's noop jobs.
type feeder struct {
	store    jobInserter
	creator  string
	inserted int
	ids      idRange                  // of every job inserted
	params   []engine.JobInsertParams // reused by every batch
}

// idRange spans the ids of the run's jobs, first to last, both included.
// The run reads and removes its jobs within it, through the primary key.
type idRange struct{ first, last int64 }

func (r idRange) empty() bool { return r.last == 0 }

func (r *idRange) add(ids []int64) {
	for _, id := range ids {
		if r.empty() || id < r.first {
			r.first = id
		}
		r.last = max(r.last, id)
	}
}

func newFeeder(store jobInserter, creator string) *feeder {
	return &feeder{store: store, creator: creator}
}

// insert adds n jobs, in batches; afterBatch, if set, runs after each.
func (f *feeder) insert(ctx context.Context, n int, afterBatch func()) error {
	for n > 0 {
		k := min(n, insertBatch)
		if cap(f.params) < k {
			f.params = make([]engine.JobInsertParams, insertBatch)
		}
		batch := f.params[:k]
		for i := range batch {
			batch[i] = engine.JobInsertParams{Type: engine.TypeNoop, Load: JobLoad, Status: engine.StatusQueued,
				MaxAttempts: 1, Creator: f.creator}
		}
		ids, err := f.store.JobInsertMany(ctx, batch)
		if err != nil {
			return err
		}
		f.ids.add(ids)
		f.inserted += k
		n -= k
		if afterBatch != nil {
			afterBatch()
		}
	}
	return nil
}

// due is how many jobs a run offering rate jobs a second should have
// inserted after elapsed.
func due(rate float64, elapsed time.Duration) int {
	return int(rate * elapsed.Seconds())
}

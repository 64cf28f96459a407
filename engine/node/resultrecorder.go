package node

import (
	"cmp"
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobctl/jobctl/engine"
)

// resultRecorder records how this node's runs ended. A result joins a
// batch (completionBatcher) written in one store call while its job is as
// its run started; one whose job changed since is read and decided alone.
// Each is written only while the job is still that run on this node
// (fencing), and never given up: while the database does not answer it is
// retried and kept on disk (resultSpool), and a later start of the node
// records what an earlier one kept (replay). A run leaves the runner's
// books once its result is recorded or dropped.
type resultRecorder struct {
	node  string
	store recorderStore
	// recordOutcome and recordOutcomes write results with what must
	// follow them (engine.RecordOutcome, engine.RecordOutcomes).
	recordOutcome  func(ctx context.Context, job *engine.Job, u engine.JobUpdate) (*engine.Job, error)
	recordOutcomes func(ctx context.Context, jobs []*engine.Job, us []engine.JobUpdate) ([]engine.JobUpdateResult, error)
	// takeLate offers a fenced run's result to its job again
	// (engine.LateOutcome), for a run that ended before the node lease
	// lapsed, as lease says (takeLateResult).
	takeLate func(ctx context.Context, run engine.LateRun) (*engine.Job, error)
	lease    leaseWitness
	log      *slog.Logger
	random   func() float64 // jitter of retry backoffs
	// completed counts the results recorded, by the status they took the job to.
	completed *prometheus.CounterVec
	// runs are the runner's books the results' runs are on.
	runs runLedger

	batcher *completionBatcher
}

// recorderStore is what the recorder reads: a job as stored, to decide a
// result whose job changed since its run started.
type recorderStore interface {
	JobGet(ctx context.Context, id int64) (*engine.Job, error)
}

// runLedger is what the recorder needs of the runner's books (jobRunner).
type runLedger interface {
	// stopState is how the run is being stopped: fenced (its result is
	// dropped) and shutdown (its job goes back to RESTART).
	stopState(ar *activeRun) (fenced, shutdown bool)
	// forget takes a run off the books once its result is settled.
	forget(id int64, ar *activeRun)
}

// newResultRecorder is the recorder of node cfg.Name, keeping what waits
// in its state directory; store records the results.
func newResultRecorder(cfg Config, store engine.Store, runs runLedger, completed *prometheus.CounterVec, random func() float64,
	log *slog.Logger) *resultRecorder {
	r := &resultRecorder{node: cfg.Name, store: store, log: log, random: random, completed: completed, runs: runs,
		recordOutcome: func(ctx context.Context, job *engine.Job, u engine.JobUpdate) (*engine.Job, error) {
			return engine.RecordOutcome(ctx, store, job, u)
		},
		recordOutcomes: func(ctx context.Context, jobs []*engine.Job, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
			return engine.RecordOutcomes(ctx, store, jobs, us)
		},
		takeLate: func(ctx context.Context, run engine.LateRun) (*engine.Job, error) {
			return engine.LateOutcome(ctx, store, run, random)
		}}
	b := newCompletionBatcher(r.recordBatch, r.keepResult, log)
	b.spool = newResultSpool(cfg.StateDir, cfg.Name, log)
	b.maxDelay = max(min(retryMaxDelay, cfg.NodeLease/4), retryMinDelay)
	r.batcher = b
	return r
}

// add queues a run's result to be recorded.
func (r *resultRecorder) add(c *completion) { r.batcher.add(c) }

// holds reports whether a result of job id waits on disk.
func (r *resultRecorder) holds(id int64) bool { return r.batcher.spool.holds(id) }

// recordBatch writes a batch of results in one store call, each guarded by
// the job as its run started (RUNNING, the version the start left). A result
// whose job changed since then is recorded alone (recordAlone), which reads
// the job and decides anew; a fenced run's result is dropped.
func (r *resultRecorder) recordBatch(batch []*completion) ([]*completion, error) {
	type pending struct {
		c *completion
		u engine.JobUpdate
	}
	writes := make([]pending, 0, len(batch))
	var dropped, alone []*completion
	for _, c := range batch {
		fenced, shutdown := r.runs.stopState(c.run)
		switch {
		case fenced:
			dropped = append(dropped, c)
		case c.alone:
			alone = append(alone, c)
		default:
			writes = append(writes, pending{c, r.outcomeUpdate(c.run.job, c.run, c.result, shutdown)})
		}
	}
	for _, c := range dropped {
		r.logDropped(c.run, c.result)
		r.settle(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), resultTryTimeout)
	defer cancel()
	var tried []*completion
	var failed error
	for _, c := range alone {
		if err := r.recordOnce(ctx, c); err != nil {
			tried, failed = append(tried, c), cmp.Or(failed, err)
		}
	}
	if len(writes) == 0 {
		return tried, failed
	}
	us := make([]engine.JobUpdate, len(writes))
	jobs := make([]*engine.Job, len(writes))
	for k, w := range writes {
		us[k], jobs[k] = w.u, w.c.run.job
		r.flushLog(ctx, w.c)
	}
	results, err := r.recordOutcomes(ctx, jobs, us)
	if errors.Is(err, engine.ErrChildrenLeft) {
		r.log.Warn("cannot cancel all the children of jobs that go back to the queue", "err", err)
		err = nil
	}
	if err != nil {
		for _, w := range writes {
			tried = append(tried, w.c)
		}
		return tried, cmp.Or(failed, err)
	}
	for k, w := range writes {
		if results[k].Err != nil {
			go r.recordAlone(w.c)
			continue
		}
		r.recorded(w.c.run, w.u, w.c.result)
		r.settle(w.c)
	}
	return tried, failed
}

// keepResult puts a result that waits for the database on disk.
func (r *resultRecorder) keepResult(c *completion) {
	r.batcher.spool.save(c, func() spoolRecord {
		_, shutdown := r.runs.stopState(c.run)
		return spoolRecord{Format: spoolFormat, JobID: c.run.job.ID, Attempt: c.run.attempt, Node: r.node,
			ExitCode: c.result.ExitCode, Outcome: c.result.Outcome, Warning: c.result.Warning, Reason: c.result.Reason,
			Shutdown: shutdown, Refused: c.run.refused, EndedAt: c.endedAt, Usage: c.result.Usage}
	})
}

// settle is done with a result, recorded or dropped: its file goes, and its
// run leaves the books.
func (r *resultRecorder) settle(c *completion) {
	if c.logPending {
		r.log.Warn("lost part of a job's log", "job", c.run.job.ID, "attempt", c.run.attempt)
	}
	r.batcher.spool.settle(c)
	r.batcher.release(c)
	r.runs.forget(c.run.job.ID, c.run)
}

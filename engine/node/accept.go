package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/runner"
)

// activeRun is a job this node accepted and has not finished with.
type activeRun struct {
	job     *engine.Job // as it started (engine.Job.Started)
	attempt int
	run     *runner.Run
	out     *jobOutput // nil when the run never started
	refused bool       // its spec is invalid: it ends FAILED, never retried
	tempDir string     // its own TMPDIR, removed when it ends; "": none
	lapses  uint64     // the fence's count of lapses when its job was taken
	// begun is closed once start has set run, or has given up: a job's
	// process may call the job API before start has recorded it.
	begun chan struct{}

	// Guarded by jobRunner.mu.
	paused     bool
	cancelling bool
	fenced     bool // the job was taken from this node: its result is dropped
	shutdown   bool // stopped by a node shutdown: back to RESTART
	// groupKilled: the watchdog killed the run's process group when the
	// node's liveness lapsed; the group may have been only a zombie leader
	// then, so run.go decides from how the leader ended.
	groupKilled bool

	// Guarded by jobAPI.mu.
	// waiters counts the job's waits for its children in progress; waiting
	// says the job is WAITING and its load off the books (waitchildren.go).
	waiters int
	waiting bool

	// waitMu orders the run's moves into and out of WAITING.
	waitMu sync.Mutex
}

// startTimeout bounds the store calls that start the jobs of a batch of
// offers, which no caller can cut short (AcceptBatch).
const startTimeout = 30 * time.Second

// Accept answers one dispatch offer: a batch of one.
func (r *jobRunner) Accept(ctx context.Context, o engine.DispatchOffer) engine.OfferResult {
	return r.AcceptBatch(ctx, []engine.DispatchOffer{o})[0]
}

// AcceptBatch answers dispatch offers, a verdict each in their order. It
// is the one acceptance path, used by the endpoint and, in-process, by this
// node's own dispatcher. A type the node does not run is refused; the books
// decide each other offer in turn (ready, not in maintenance, room for the
// load, no earlier run of the job still stopping) and enter it, so a batch
// larger than the room is accepted in part; the jobs they took become
// RUNNING here in guarded store calls (startInHalves, each transition
// engine.StartOfferUpdate: for a job offered straight from the queue that
// start is its claim), and each is started apart: the answer does not
// wait for the processes.
func (r *jobRunner) AcceptBatch(ctx context.Context, offers []engine.DispatchOffer) []engine.OfferResult {
	out := make([]engine.OfferResult, len(offers))
	if taken := r.take(offers, out); len(taken) > 0 {
		us := make([]engine.JobUpdate, len(taken))
		starts := engine.NewOfferStarts(r.cfg.Name)
		for k, t := range taken {
			us[k] = starts.Update(t.offer)
		}
		// Once the books took the jobs, their start runs to its end
		// whatever becomes of the caller: a round stopped by the node's
		// shutdown, a dispatcher that hung up. Cut off, the statement may
		// still commit, unseen, and leave its jobs RUNNING here with no
		// run until the orphan check finds them; run to its end, its jobs
		// run, and a shutdown drains them like any other.
		start, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
		defer cancel()
		r.startInHalves(start, taken, us, out)
	}
	for _, res := range out {
		r.metrics.offer(res.Verdict)
	}
	return out
}

// StartLocal is AcceptBatch for this node's own dispatcher, which hands it
// the jobs as its round read them, under its lease term, without HTTP.
func (r *jobRunner) StartLocal(ctx context.Context, term engine.LeaseTerm, jobs []*engine.Job) []engine.OfferResult {
	offers := make([]engine.DispatchOffer, len(jobs))
	for i, j := range jobs {
		offers[i] = engine.OfferOf(j, term)
	}
	return r.AcceptBatch(ctx, offers)
}

// takenOffer is an offer the books took, with the run it becomes.
type takenOffer struct {
	index   int // in the batch
	offer   engine.DispatchOffer
	handler handler
	run     *activeRun
	warning string // the books accepted it with this warning
}

// take lets the books decide each offer and answers those they do not
// take; the rest are entered as runs not started yet.
func (r *jobRunner) take(offers []engine.DispatchOffer, out []engine.OfferResult) []takenOffer {
	taken := make([]takenOffer, 0, len(offers))
	lapses := r.fence.lapseCount()
	for i, o := range offers {
		h, ok := r.handlers[o.Type]
		if !ok {
			out[i] = engine.OfferResult{Verdict: engine.OfferRefused, Reason: fmt.Sprintf("type %q not offered by node %s", o.Type, r.cfg.Name)}
			continue
		}
		// The load is on the books before the job is looked at, so
		// concurrent offers cannot together overcommit the node; the run
		// is counted in the same step, so a shutdown's drain waits for it.
		// The books also take a job at most once, so the jobs taken are
		// distinct, as the store's batch wants them.
		d := r.books.Take(o.JobID, o.Load, func() { r.runsDone.Add(1) })
		if !d.Accept {
			out[i] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: d.Reason}
			continue
		}
		taken = append(taken, takenOffer{index: i, offer: o, handler: h, run: &activeRun{attempt: o.Attempt + 1, lapses: lapses, begun: make(chan struct{})}, warning: d.Warning})
	}
	r.mu.Lock()
	for _, t := range taken {
		r.runs[t.offer.JobID] = t.run // a placeholder until started
	}
	r.mu.Unlock()
	return taken
}

// startInHalves is startTaken for a batch of any size: one of at least
// startHalvesMin jobs is started as two store calls at once, half the jobs
// each. The database then works the halves side by side, on cores of its
// own, and the round waiting for the answer waits about half as long; on
// a store with one writer at a time the halves go one after the other, as
// one call would. Each start is guarded on its own, so nothing needs the
// halves to be one statement.
func (r *jobRunner) startInHalves(ctx context.Context, taken []takenOffer, us []engine.JobUpdate, out []engine.OfferResult) {
	if len(taken) < startHalvesMin {
		r.startTaken(ctx, taken, us, out)
		return
	}
	h := len(taken) / 2
	var wg sync.WaitGroup
	wg.Go(func() { r.startTaken(ctx, taken[h:], us[h:], out) })
	r.startTaken(ctx, taken[:h], us[:h], out)
	wg.Wait()
}

// startHalvesMin is the smallest batch startInHalves splits: a smaller
// batch starts quickly anyway, and a second statement would only add its
// round trip.
const startHalvesMin = 500

// startTaken moves the taken jobs to RUNNING in one store call, with the
// start transition us[k] of each, reading back what each runs by, and
// starts them. The version guard of each makes sure the job is still the
// one offered: a job cancelled or redispatched meanwhile is not started.
func (r *jobRunner) startTaken(ctx context.Context, taken []takenOffer, us []engine.JobUpdate, out []engine.OfferResult) {
	results, err := r.store.JobStartMany(ctx, us)
	if err != nil {
		for _, t := range taken {
			r.forget(t.offer.JobID, t.run)
			out[t.index] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "not-ready: " + err.Error()}
		}
		return
	}
	var refused []refusal
	for k, t := range taken {
		job, err := results[k].Job, results[k].Err
		switch {
		case errors.Is(err, engine.ErrConflict):
			r.forget(t.offer.JobID, t.run)
			out[t.index] = r.notStarted(ctx, t.offer)
		case err != nil:
			r.forget(t.offer.JobID, t.run)
			out[t.index] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "not-ready: " + err.Error()}
		default:
			t.run.job, t.run.attempt = job, job.Attempt
			spec, err := r.spec(t.handler, job, job.Attempt)
			if err != nil {
				refused = append(refused, refusal{t.run, err.Error()})
				out[t.index] = engine.OfferResult{Verdict: engine.OfferRefused, Reason: err.Error()}
				continue
			}
			// The job is RUNNING here and its run on the books: the
			// process starts apart, so the offer's answer does not wait for
			// the fork, the job's cgroup and the watchdog. Each start takes
			// milliseconds on a busy machine, and a dispatcher that waited
			// for a batch's starts, one after another, would leave the room
			// freed meanwhile empty until its next round. A run not started
			// yet has no process (ar.run nil), as every stop path expects.
			go r.start(t.handler, spec, t.run)
			out[t.index] = engine.OfferResult{Verdict: engine.OfferAccepted}
			if t.warning != "" {
				r.log.Warn(t.warning, "job", job.ID)
			}
		}
	}
	if len(refused) > 0 {
		r.endRefused(ctx, refused)
	}
}

// notStarted tells a job that moved on from one that never was, and from
// one whose start the store refused because the offer's lease term is no
// longer current, which the store's batch does not: the rare path of a
// lost race may read the job. A job still as offered was refused for its
// term: the offer is declined, and the job waits for the current holder.
func (r *jobRunner) notStarted(ctx context.Context, o engine.DispatchOffer) engine.OfferResult {
	job, err := r.store.JobGet(ctx, o.JobID)
	if errors.Is(err, engine.ErrNotFound) {
		return engine.OfferResult{Verdict: engine.OfferUnknownJob, Reason: "unknown job"}
	}
	if err == nil && o.LeaseTerm > 0 && job.Status == o.Status && job.Version == o.Version {
		return engine.OfferResult{Verdict: engine.OfferDeclined,
			Reason: fmt.Sprintf("not-ready: lease term %d of %s is no longer current", o.LeaseTerm, o.Dispatcher)}
	}
	return engine.OfferResult{Verdict: engine.OfferGone, Reason: "job moved on"}
}

// Accepting reports whether the node takes work; heartbeats answer with it.
func (r *jobRunner) Accepting() bool { return r.books.Ready() }

// Health is the node's answer to GET /healthz.
func (r *jobRunner) Health() endpoint.Health {
	load, running := r.books.Totals()
	return endpoint.Health{Node: r.cfg.Name, Accepting: r.books.Ready(), Load: load, Running: running,
		Waiting: r.books.Waiting()}
}

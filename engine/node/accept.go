package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/runner"
)

// activeRun is a job this node accepted and has not finished with.
type activeRun struct {
	job     *engine.Job // as it was when it started
	attempt int
	run     *runner.Run
	logs    *runner.LogBatcher

	// Guarded by Runtime.mu.
	paused     bool
	cancelling bool
	fenced     bool // the job was taken from this node: its result is dropped
	shutdown   bool // stopped by a node shutdown: back to RESTART
}

// Accept answers one dispatch offer. It is the one acceptance path, used by
// the endpoint and, in-process, by this node's own dispatcher: the books
// decide (ready, not in maintenance, room for the load, no earlier run of
// the job still stopping) and enter the job, then the job is started.
func (n *Runtime) Accept(ctx context.Context, o engine.DispatchOffer) engine.OfferResult {
	h, ok := n.handlers[o.Type]
	if !ok {
		return n.verdict(engine.OfferRefused, fmt.Sprintf("type %q not offered by node %s", o.Type, n.cfg.Name))
	}
	// The load is on the books before the job is looked at, so concurrent
	// offers cannot together overcommit the node; the run is counted in
	// the same step, so a shutdown's drain waits for it.
	d := n.books.Take(o.JobID, o.Load, func() { n.runsDone.Add(1) })
	if !d.Accept {
		return n.verdict(engine.OfferDeclined, d.Reason)
	}
	ar := &activeRun{attempt: o.Attempt + 1}
	n.mu.Lock()
	n.runs[o.JobID] = ar // a placeholder until started
	n.mu.Unlock()

	res := n.start(ctx, h, o, ar)
	if res.Verdict != engine.OfferAccepted {
		n.forget(o.JobID, ar)
		return n.verdict(res.Verdict, res.Reason)
	}
	if d.Warning != "" {
		n.log.Warn(d.Warning, "job", o.JobID)
	}
	return n.verdict(res.Verdict, res.Reason)
}

// Accepting reports whether the node takes work; heartbeats answer with it.
func (n *Runtime) Accepting() bool { return n.books.Ready() }

// Health is the node's answer to GET /healthz.
func (n *Runtime) Health() endpoint.Health {
	load, running := n.books.Totals()
	return endpoint.Health{Node: n.cfg.Name, Accepting: n.books.Ready(), Load: load, Running: running}
}

func (n *Runtime) verdict(v engine.OfferVerdict, reason string) engine.OfferResult {
	n.metrics.offers.WithLabelValues(v.String()).Inc()
	return engine.OfferResult{Verdict: v, Reason: reason}
}

// start moves the offered job to RUNNING and starts it. The version guard
// makes sure the job is still the one offered: a job cancelled or
// redispatched meanwhile is not started.
func (n *Runtime) start(ctx context.Context, h handler, o engine.DispatchOffer, ar *activeRun) engine.OfferResult {
	job, err := n.store.JobGet(ctx, o.JobID)
	if errors.Is(err, engine.ErrNotFound) {
		return engine.OfferResult{Verdict: engine.OfferUnknownJob, Reason: "unknown job"}
	}
	if err != nil {
		return engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "not-ready: " + err.Error()}
	}
	if job.Status != engine.StatusDispatching || job.Node != n.cfg.Name || job.Version != o.Version {
		return engine.OfferResult{Verdict: engine.OfferGone, Reason: "job moved on"}
	}
	spec, err := n.spec(h, job, job.Attempt+1)
	if err != nil {
		return engine.OfferResult{Verdict: engine.OfferRefused, Reason: err.Error()}
	}
	job, err = n.store.JobUpdate(ctx, engine.StartUpdate(job))
	if errors.Is(err, engine.ErrConflict) {
		return engine.OfferResult{Verdict: engine.OfferGone, Reason: "job moved on"}
	}
	if err != nil {
		return engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "not-ready: " + err.Error()}
	}
	ar.job, ar.attempt = job, job.Attempt
	out := n.newOutput(job)
	ar.logs = out.logs

	// From here on the job is RUNNING on this node: whatever happens, its
	// end is recorded by finish.
	var run *runner.Run
	if h.builtin != nil {
		run, err = runner.StartBuiltin(spec, h.builtin, out)
	} else {
		run, err = runner.Start(spec, out)
	}
	if err != nil {
		go n.finish(ar, runner.Result{ExitCode: -1, Outcome: runner.Failed, Reason: "cannot start: " + err.Error()})
		return engine.OfferResult{Verdict: engine.OfferAccepted}
	}
	n.mu.Lock()
	ar.run = run
	if n.stopping {
		// Accepted just as the shutdown grace ran out: put it back too.
		ar.shutdown = true
		run.Cancel("node shutting down", n.cfg.CancelGrace)
	}
	n.mu.Unlock()
	n.metrics.running.Inc()
	n.log.Info("job started", "job", job.ID, "type", job.Type, "attempt", job.Attempt, "load", job.Load)
	go func() {
		<-run.Done()
		n.metrics.running.Dec()
		n.finish(ar, run.Result())
	}()
	return engine.OfferResult{Verdict: engine.OfferAccepted}
}

// forget takes a run off the node's books and frees its load. The run
// leaves the runs map before the books release the job, so a new run of
// the same job, which the books let in only after that, is never dropped
// here by mistake.
func (n *Runtime) forget(id int64, ar *activeRun) {
	n.mu.Lock()
	if n.runs[id] != ar {
		n.mu.Unlock()
		return
	}
	delete(n.runs, id)
	n.mu.Unlock()
	n.books.Release(id)
	n.runsDone.Done()
}

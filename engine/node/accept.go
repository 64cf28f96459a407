package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
	"github.com/jobctl/jobctl/engine/runner"
)

// activeRun is a job this node accepted and has not finished with.
type activeRun struct {
	job     *engine.Job // as it was when it started
	attempt int
	load    float64
	run     *runner.Run
	logs    *runner.LogBatcher

	// Guarded by Node.mu.
	paused     bool
	cancelling bool
	fenced     bool // the job was taken from this node: its result is dropped
	shutdown   bool // stopped by a node shutdown: back to RESTART
}

// Accept answers one dispatch offer (DESIGN.md §5). It is the one
// acceptance path, used by the HTTP endpoint and, in-process, by this
// node's own dispatcher.
func (n *Node) Accept(ctx context.Context, o engine.DispatchOffer) engine.OfferResult {
	h, ok := n.handlers[o.Type]
	if !ok {
		return n.verdict(engine.OfferRefused, fmt.Sprintf("type %q not offered by node %s", o.Type, n.cfg.Name))
	}

	// Reserve the load before looking at the job, so concurrent offers
	// cannot together overcommit the node.
	n.mu.Lock()
	if !n.accepting {
		n.mu.Unlock()
		return n.verdict(engine.OfferDeclined, "not-ready")
	}
	if n.maintenance {
		n.mu.Unlock()
		return n.verdict(engine.OfferDeclined, "not-ready: in maintenance")
	}
	d := placement.Accept(placement.AcceptInput{MaxLoad: n.cfg.MaxLoad, Load: n.load, Running: len(n.runs),
		MaxJobs: n.cfg.MaxJobs, JobLoad: o.Load, AcceptExceeding: n.cfg.AcceptExceeding})
	if !d.Accept {
		n.mu.Unlock()
		return n.verdict(engine.OfferDeclined, d.Reason)
	}
	if _, busy := n.runs[o.JobID]; busy {
		// A run of this job taken from this node may still be stopping:
		// two runs of one job never overlap here.
		n.mu.Unlock()
		return n.verdict(engine.OfferDeclined, "not-ready: an earlier run of this job is still stopping")
	}
	n.load += o.Load
	ar := &activeRun{load: o.Load, attempt: o.Attempt + 1}
	n.runs[o.JobID] = ar // a placeholder until started; counts against max jobs
	n.runsDone.Add(1)    // under the lock with accepting, so a shutdown's drain waits for it
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

func (n *Node) verdict(v engine.OfferVerdict, reason string) engine.OfferResult {
	n.metrics.offers.WithLabelValues(v.String()).Inc()
	return engine.OfferResult{Verdict: v, Reason: reason}
}

// start moves the offered job to RUNNING and starts it. The version guard
// makes sure the job is still the one offered: a job cancelled or
// redispatched meanwhile is not started.
func (n *Node) start(ctx context.Context, h handler, o engine.DispatchOffer, ar *activeRun) engine.OfferResult {
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
	job, err = n.store.JobUpdate(ctx, engine.JobUpdate{ID: job.ID, From: job.Status, Version: job.Version,
		To: engine.StatusRunning, IncrementAttempt: true, MarkStarted: true, Message: engine.Ptr("")})
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

// forget drops a run from the node's books and frees its load.
func (n *Node) forget(id int64, ar *activeRun) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runs[id] != ar {
		return
	}
	delete(n.runs, id)
	n.load -= ar.load
	if len(n.runs) == 0 {
		n.load = 0 // no float drift once idle
	}
	n.runsDone.Done()
}

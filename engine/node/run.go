package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// start runs a job the node has just moved to RUNNING, in a goroutine of
// its own, and returns once the run has ended and finish has its result:
// from here on the job is RUNNING on this node, and whatever happens,
// finish records its end. The run is waited for right here, not by
// another goroutine, and a builtin's handler runs right here: a node
// working thousands of short jobs a second starts two goroutines fewer for
// each.
func (r *jobRunner) start(h handler, spec runner.Spec, ar *activeRun) {
	job := ar.job
	ar.out = r.newOutput(job)
	spec.Watcher = runGroup{r: r, ar: ar}
	spec.Group = r.resources.jobGroup(h, job, spec.Attempt)
	var run *runner.Run
	var err error
	switch {
	case h.builtin != nil:
		// Prepared, not started: it runs below, in this goroutine.
		run, err = runner.PrepareBuiltin(spec, h.builtin, ar.out)
	case h.user != nil:
		if err = r.resources.makeTempDir(h.user, ar, &spec); err == nil {
			run, err = runner.Start(spec, ar.out)
		}
	default:
		run, err = runner.Start(spec, ar.out)
	}
	if err != nil {
		close(ar.begun)
		if spec.Group != nil {
			_ = spec.Group.Remove()
		}
		r.resources.removeTempDir(ar)
		r.finish(ar, runner.Result{ExitCode: -1, Outcome: runner.Failed, Reason: "cannot start: " + err.Error()})
		return
	}
	r.mu.Lock()
	ar.run = run
	lapsed := false
	switch {
	case r.stopping:
		// Accepted just as the shutdown grace ran out: put it back too.
		ar.shutdown = true
		run.Cancel("node shutting down", r.cfg.CancelGrace)
	case r.fence.lapsedSince(ar.lapses):
		// Liveness lapsed since its job was taken, and stopForLapse
		// passed it by, not started yet: the cluster may have taken the
		// job back meanwhile, so it must not go on either.
		lapsed = true
		if run.Kill(lapseReason) {
			ar.shutdown = true
		}
	}
	r.mu.Unlock()
	if lapsed {
		// Its process began, so it may have done some of its work: the
		// node's log says why it went no further.
		r.log.Warn("stopped a run as it started: liveness lapsed since its job was taken",
			"job", job.ID, "attempt", ar.attempt)
	}
	// Counted before begun is closed, so whoever waits for the run to
	// begin finds it counted.
	r.metrics.running.Inc()
	r.metrics.started(job)
	close(ar.begun)
	began := time.Now()
	if r.log.Enabled(context.Background(), slog.LevelDebug) { // spares building the line's values
		r.log.Debug("job started", "job", job.ID, "type", job.Type, "attempt", job.Attempt, "load", job.Load)
	}
	run.Execute() // a builtin's handler, here; a process runs on its own
	<-run.Done()
	// Before the result: whoever sees the job ended finds its TMPDIR gone.
	r.resources.removeTempDir(ar)
	r.metrics.running.Dec()
	r.metrics.run.WithLabelValues(job.Type).Observe(time.Since(began).Seconds())
	// A run that ended on its own keeps its result even when it is read
	// only after a lapse (the node was frozen): it is recorded only while
	// the job is still this attempt on this node, so a job restarted
	// elsewhere meanwhile drops it. A leader ended by a signal in a group
	// the watchdog killed was stopped by the fence: back to the queue, as
	// runs the node kills itself are marked.
	res := run.Result()
	r.mu.Lock()
	if ar.groupKilled && res.ExitCode < 0 {
		ar.shutdown = true
	}
	r.mu.Unlock()
	r.finish(ar, res)
}

// forget takes a run off the node's books and frees its load. The run
// leaves the runs map before the books release the job, so a new run of
// the same job, which the books let in only after that, is never dropped
// here by mistake.
func (r *jobRunner) forget(id int64, ar *activeRun) {
	r.mu.Lock()
	if r.runs[id] != ar {
		r.mu.Unlock()
		return
	}
	delete(r.runs, id)
	r.mu.Unlock()
	r.books.Release(id)
	r.runsDone.Done()
}

// refusal is a job started that can never run here (an invalid spec).
type refusal struct {
	run    *activeRun
	reason string
}

// endRefused fails, for good, jobs started only to be found unrunnable: the
// batch learns a job's args and payload only from the started row. They end
// before the offers are answered, as a refusal before the start would; one
// the store does not take now is recorded like any other result.
func (r *jobRunner) endRefused(ctx context.Context, refused []refusal) {
	us := make([]engine.JobUpdate, len(refused))
	for k, f := range refused {
		f.run.refused = true
		us[k] = engine.RefuseUpdate(f.run.job, r.cfg.Name, f.reason)
	}
	results, err := r.store.JobUpdateMany(ctx, us)
	for k, f := range refused {
		res := runner.Result{ExitCode: -1, Outcome: runner.Failed, Reason: f.reason}
		if err != nil || results[k].Err != nil {
			go r.finish(f.run, res)
			continue
		}
		r.results.recorded(f.run, us[k], res)
		r.forget(f.run.job.ID, f.run)
	}
}

package node

import (
	"context"
	"errors"

	"github.com/jobctl/jobctl/engine"
)

// runEndLease is how a run's end stood to the node lease: whether the node
// still held it then, and how many lapses its fence had found by then.
type runEndLease struct {
	inLease bool
	lapses  uint64
}

// endLease is how a run that ends now stands to the node lease.
func (f *fence) endLease() runEndLease {
	return runEndLease{inLease: !f.lapsedNow(), lapses: f.lapseCount()}
}

// endedBeforeLapse reports whether the run ended while the node held its
// node lease, and the lease lapsed after that: the cluster may since have
// given up on the node and put the job back, but only after the run had
// ended here, so its result is as good as one recorded in time.
func (f *fence) endedBeforeLapse(end runEndLease) bool {
	return end.inLease && f.lapsedSince(end.lapses)
}

// leaseWitness is what the result recorder asks the fence (fence): whether
// a run ended before the node lease lapsed.
type leaseWitness interface {
	endedBeforeLapse(end runEndLease) bool
}

// takeLateResult offers the result of a fenced run to the store when the
// run ended before the node's lease lapsed: if the job was only put back to
// RESTART for it, and no new attempt has started, the result is taken
// (engine.LateOutcome) and the job does not run again. It reports whether
// the result was taken; an error means the store did not answer.
func (r *resultRecorder) takeLateResult(ctx context.Context, c *completion) (bool, error) {
	ar := c.run
	fenced, shutdown := r.runs.stopState(ar)
	if fenced || shutdown || ar.refused || r.lease == nil || !r.lease.endedBeforeLapse(c.lease) {
		return false, nil
	}
	run := engine.LateRun{JobID: ar.job.ID, Attempt: ar.attempt, Node: r.node, Result: c.result}
	job, err := r.takeLate(ctx, run)
	switch {
	case errors.Is(err, engine.ErrConflict) || errors.Is(err, engine.ErrNotFound) ||
		errors.Is(err, engine.ErrInvalidTransition) || errors.Is(err, engine.ErrInvalid):
		return false, nil
	case err != nil:
		return false, err
	}
	r.completed.WithLabelValues(string(job.Status)).Inc()
	r.log.Info("took the late result of a job nothing had replaced", "job", job.ID, "attempt", ar.attempt,
		"status", job.Status, "result", c.result.Reason)
	return true, nil
}

package commands

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// How a wait says why a job still waits: it asks the dispatcher's own rules
// (dispatch.Explain, as 'jobctl explain' does) at most every
// waitExplainEvery, and on a pipe writes the reason to stderr once the job
// has waited waitQuietFor with neither its state nor the reason changing,
// and again whenever they change after that.
const (
	waitExplainEvery = 2 * time.Second
	waitQuietFor     = 10 * time.Second
)

// waitReasons keeps, for the first job of a wait that waits for a node, why
// it waits, read again every so often.
type waitReasons struct {
	store    dispatch.ExplainStore
	clock    engine.Clock
	selector placement.Selector
	// notes is stderr when it is not a terminal: the reason goes there as
	// a line of its own; nil on a terminal, where the progress line shows it.
	notes io.Writer
	every time.Duration // how often the reason is read again
	quiet time.Duration // how long a reason stands before it goes to notes

	job      int64         // the job the reason is about; 0: none yet
	status   engine.Status // its state when the reason was read
	reason   string        // the explanation's conclusion
	read     time.Time     // when the reason was read
	since    time.Time     // since when job, status and reason are what they are
	reported bool          // the reason went to notes
}

func newWaitReasons(store dispatch.ExplainStore, ios *IOStreams, clock engine.Clock) *waitReasons {
	sel, _ := placement.ParseSelector(placement.SelectorLoadFactor)
	r := &waitReasons{store: store, clock: clock, selector: sel, every: waitExplainEvery, quiet: waitQuietFor}
	if !ios.ErrIsTerminal {
		r.notes = ios.ErrOut
	}
	return r
}

// waitsForNode reports whether a job that has not ended waits for
// something other than its own run: a node, its turn, its children.
func waitsForNode(j *engine.Job) bool {
	switch j.Status {
	case engine.StatusRunning, engine.StatusCancelling:
		return false
	}
	return !j.Status.Terminal()
}

// update reads the reason again when it is due for the first waiting job
// among jobs, writes it to notes when it has stood long enough, and returns
// what the progress line shows of it: "job 7: no node can take it now: 1
// busy" for several jobs, the reason alone for one; "" when no job waits.
func (r *waitReasons) update(ctx context.Context, jobs []*engine.Job) string {
	var j *engine.Job
	for _, c := range jobs {
		if waitsForNode(c) {
			j = c
			break
		}
	}
	now := r.clock.Now()
	if j == nil {
		r.job, r.reason = 0, ""
		return ""
	}
	if j.ID != r.job || j.Status != r.status || now.Sub(r.read) >= r.every {
		reason := r.reason
		if j.ID != r.job {
			reason = ""
		}
		if e, err := dispatch.Explain(ctx, r.store, j.ID, r.selector); err == nil {
			reason = e.Conclusion
		}
		if j.ID != r.job || j.Status != r.status || reason != r.reason {
			r.since, r.reported = now, false
		}
		r.job, r.status, r.reason, r.read = j.ID, j.Status, reason, now
	}
	if r.reason == "" {
		return ""
	}
	if r.notes != nil && !r.reported && now.Sub(r.since) >= r.quiet {
		r.reported = true
		fmt.Fprintf(r.notes, "jobctl: job %d still %s after %s: %s\n", j.ID, j.Status, elapsed(now.Sub(r.since)), r.reason)
	}
	if len(jobs) > 1 {
		return fmt.Sprintf("job %d: %s", j.ID, r.reason)
	}
	return r.reason
}

package runner

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// ErrFinished is returned when pausing or resuming a run that has ended.
var ErrFinished = errors.New("job has already finished")

// ErrStopping is returned when pausing or resuming a run that is being cancelled.
var ErrStopping = errors.New("job is being stopped")

// control is what differs between a child process and a builtin.
type control interface {
	pause() error
	resume() error
	// terminate asks the run to stop (SIGTERM) and lets a paused run go on so
	// that it can; phrase says why, for the log.
	terminate(phrase string)
	// kill forces a run that did not stop within grace.
	kill(grace time.Duration)
	// killNow forces the run at once; phrase says why, for the log.
	killNow(phrase string)
	// endedOnItsOwn reports that the run's process has already ended on its own,
	// though its end may not be read yet.
	endedOnItsOwn() bool
}

// Run is one running attempt of a job. Its methods are safe for concurrent use.
type Run struct {
	spec Spec
	out  *trackingOutput
	ctl  control // nil when the process could not be started
	done chan struct{}

	mu      sync.Mutex
	paused  bool
	stop    *stopRequest
	timeout *time.Timer
	result  Result
}

// stopRequest is a Cancel or an expired timeout; it decides the outcome
// whatever the exit status, because the job ended when asked to.
type stopRequest struct {
	outcome Outcome // Cancelled or TimedOut
	reason  string  // Result.Reason
	phrase  string  // for log lines: "cancelled (reason)", "timed out after 2s"
}

func newRun(s Spec, out Output) *Run {
	return &Run{spec: s, out: &trackingOutput{Output: out}, done: make(chan struct{})}
}

// start attaches the running handler and arms the timeout.
func (r *Run) start(ctl control) {
	r.ctl = ctl
	if r.spec.Timeout > 0 {
		r.mu.Lock()
		r.timeout = time.AfterFunc(r.spec.Timeout, r.timedOut)
		r.mu.Unlock()
	}
}

func (r *Run) timedOut() {
	after := fmt.Sprintf("timed out after %s", r.spec.Timeout)
	r.stopWith(stopRequest{outcome: TimedOut, reason: after, phrase: after}, r.spec.grace())
}

// Done is closed when the run has ended and Result is valid.
func (r *Run) Done() <-chan struct{} { return r.done }

// Result is how the run ended; call it after Done is closed.
func (r *Run) Result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

// Paused reports whether the run is paused now.
func (r *Run) Paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.paused
}

// Pause stops the run: SIGSTOP to the whole process group, or the gate of a
// builtin closes. Pausing a paused run does nothing.
func (r *Run) Pause() error {
	changed, err := r.setPaused(true)
	if changed {
		r.out.logf("paused")
	}
	return err
}

// Resume lets a paused run go on: SIGCONT, or the gate of a builtin opens.
// Resuming a run that is not paused does nothing.
func (r *Run) Resume() error {
	changed, err := r.setPaused(false)
	if changed {
		r.out.logf("resumed")
	}
	return err
}

// setPaused reports whether the state changed. It holds the lock while
// signalling so that a concurrent Cancel or finish sees the state the process
// is really in.
func (r *Run) setPaused(paused bool) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.finished():
		return false, ErrFinished
	case r.stop != nil:
		return false, ErrStopping
	case r.paused == paused:
		return false, nil
	}
	op := r.ctl.resume
	if paused {
		op = r.ctl.pause
	}
	if err := op(); err != nil {
		return false, err
	}
	r.paused = paused
	return true, nil
}

// Cancel stops the run: SIGTERM to the process group (and SIGCONT, so a
// paused job can act on it), then SIGKILL to the group if it is still running
// after grace. Every step is written to the job's log. Calling it again, or
// after the run ended, does nothing.
func (r *Run) Cancel(reason string, grace time.Duration) {
	req := stopRequest{outcome: Cancelled, reason: "cancelled", phrase: "cancelled"}
	if reason != "" {
		req.reason = "cancelled: " + reason
		req.phrase = "cancelled (" + reason + ")"
	}
	r.stopWith(req, grace)
}

// Kill ends the run at once: SIGKILL to the whole process group, with no
// SIGTERM and no grace (a builtin is cancelled, as it cannot be forced). It
// is for runs that must not go on a moment longer, such as those of a node
// that lost its node lease; a run being cancelled already is killed too,
// and keeps the reason it was given. It reports whether it stopped
// anything: a run whose process had already ended on its own keeps its
// result (its end may simply not have been read yet, as in a node that was
// frozen), and Kill then does nothing.
func (r *Run) Kill(reason string) bool {
	r.mu.Lock()
	if r.finished() || r.ctl.endedOnItsOwn() {
		r.mu.Unlock()
		return false
	}
	phrase := "killed (" + reason + ")"
	if r.stop == nil {
		r.stop = &stopRequest{outcome: Cancelled, reason: "cancelled: " + reason, phrase: phrase}
	}
	r.paused = false
	r.mu.Unlock()
	r.ctl.killNow(phrase)
	return true
}

func (r *Run) stopWith(req stopRequest, grace time.Duration) {
	r.mu.Lock()
	if r.stop != nil || r.finished() {
		r.mu.Unlock()
		return
	}
	r.stop = &req
	r.paused = false
	r.mu.Unlock()

	r.ctl.terminate(req.phrase)
	time.AfterFunc(grace, func() {
		if !r.finished() {
			r.ctl.kill(grace)
		}
	})
}

// finished reports whether Done is closed; finish closes it under r.mu, so
// under the lock the answer cannot change.
func (r *Run) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// finish records the result and closes Done.
func (r *Run) finish(e ending) {
	warned, warning := r.out.lastWarning()
	res := Result{ExitCode: e.exitCode, Outcome: Failed, Warning: warning, Reason: e.reason, Usage: e.usage}
	if e.final {
		res.Outcome = FailedFinally
	}

	r.mu.Lock()
	switch {
	case r.stop != nil:
		res.Outcome, res.Reason = r.stop.outcome, r.stop.reason
	case e.ok && warned:
		res.Outcome = SucceededWithWarning
	case e.ok:
		res.Outcome = Succeeded
	}
	if r.timeout != nil {
		r.timeout.Stop()
	}
	r.result = res
	close(r.done)
	r.mu.Unlock()
}

// Live is what the run has used so far, for a node's report of its running
// jobs: CPU seconds, the cores used since the last call (or the start) and
// the memory held now. ok is false for a builtin, which is no process of
// its own, and for a run whose process has ended.
func (r *Run) Live() (u engine.LiveUsage, ok bool) {
	all := Live([]*Run{r})
	if len(all) == 0 {
		return u, false
	}
	return all[0], true
}

// Live is what each of runs has used so far, as Run.Live says it, for
// those that are running processes: a node's report of its running jobs.
// What no cgroup measures is read from /proc once for all of them.
func Live(runs []*Run) []engine.LiveUsage {
	var procs func(int) procTotals
	read := func(pgid int) procTotals {
		if procs == nil {
			pgids := map[int]bool{}
			for _, r := range runs {
				if p, ok := r.ctl.(*process); ok {
					pgids[p.pid] = true
				}
			}
			totals := processGroupTotals(pgids)
			procs = func(g int) procTotals { return totals[g] }
		}
		return procs(pgid)
	}
	out := make([]engine.LiveUsage, 0, len(runs))
	for _, r := range runs {
		p, isProcess := r.ctl.(*process)
		if !isProcess || r.finished() {
			continue
		}
		cpu, cores, memory, ok := p.live(read)
		if ok {
			out = append(out, engine.LiveUsage{JobID: r.spec.JobID, Attempt: r.spec.Attempt, CPUSeconds: cpu.Seconds(),
				Cores: cores, Memory: memory})
		}
	}
	return out
}

package node

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine/watchdog"
)

// lapseReason is what the log of a job stopped by a lapse says.
const lapseReason = "node could not record its liveness within its node lease"

// fence keeps this node's runs within its node lease. From the moment the
// node last recorded its liveness plus NodeLease, the cluster may run its
// jobs elsewhere, so none of them may go on here. The deadline is kept in
// two places: here, where a node that is alive but cut off from its
// database stops its runs itself, and in the watchdog process beside the
// node (when there is one), which kills the runs' whole process groups
// when the node is frozen or dead and cannot.
//
// On a lapse the node stops every run, puts each back to RESTART like a
// run cut off by a shutdown, and declines offers until it records its
// liveness again. A run that ends while liveness has lapsed, or that the
// watchdog killed, goes back to RESTART too: it did not end on its own.
type fence struct {
	lease time.Duration // the node lease
	// ready is whether the node takes work: a lapse holds it off.
	ready readiness
	// stopRuns stops the node's runs for a lapse and counts them.
	stopRuns func() int
	log      *slog.Logger
	argv     []string // the watchdog's command; none: the deadline is kept here only
	now      func() time.Time

	mu        sync.Mutex
	ctx       context.Context // the node's run: done once it shuts down
	wd        *watchdog.Client
	deadline  time.Time // zero: no liveness recorded yet
	timer     *time.Timer
	lapsed    bool      // the deadline passed, and no liveness recorded since
	lapsedAt  time.Time // when it was found lapsed
	lapses    uint64    // how many lapses were found so far
	heldReady bool      // the lapse, not a shutdown, made the node decline offers
	stopped   bool
}

// readiness is whether the node takes work (placement.Books).
type readiness interface {
	Ready() bool
	SetReady(bool)
}

func newFence(lease time.Duration, ready readiness, stopRuns func() int, log *slog.Logger) *fence {
	return &fence{lease: lease, ready: ready, stopRuns: stopRuns, log: log, now: time.Now, ctx: context.Background()}
}

// WithWatchdog has the node run argv as its watchdog process (`jobctl
// watchdog`): one that speaks the protocol of package watchdog. One that
// exits while the node runs is replaced. Without it the node keeps its
// node lease in-process only, and a job's grandchildren outlive a node
// that is killed.
func WithWatchdog(argv []string) Option {
	return func(n *Runtime) { n.fence.argv = slices.Clone(argv) }
}

// start starts the watchdog, if there is one, and the deadline: began is
// when the node started recording itself (registration counts as a record
// of its liveness).
func (f *fence) start(ctx context.Context, began time.Time) error {
	f.mu.Lock()
	f.ctx = ctx
	f.mu.Unlock()
	if len(f.argv) > 0 {
		wd, err := watchdog.Start(f.argv, f.log, func() { f.lapse("the watchdog killed the jobs") })
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.wd = wd
		f.mu.Unlock()
		f.log.Debug("watchdog started", "pid", wd.Pid())
	}
	f.recorded(began)
	return nil
}

// stop ends the fence at a clean shutdown. Run calls it once its runs are
// over, so the watchdog, which kills what it still watches when its pipe
// closes, has nothing left to kill.
func (f *fence) stop() {
	f.mu.Lock()
	f.stopped = true
	if f.timer != nil {
		f.timer.Stop()
	}
	wd := f.wd
	f.wd = nil
	f.mu.Unlock()
	if wd != nil {
		wd.Close()
	}
}

// recorded moves the deadline: the node's liveness was recorded by a write
// that began at began, so it holds until began + NodeLease. A deadline that
// passed before this record still stops the runs first: the cluster may
// have taken their jobs meanwhile.
//
// Only a write that began after a lapse was found ends it. One that began
// before (in flight while the node was frozen, say) would hold only for
// what is left of its lease, so the node would take work and, moments
// later, stop it again.
func (f *fence) recorded(began time.Time) {
	if f == nil {
		return
	}
	now := f.now()
	deadline := began.Add(f.lease)
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return
	}
	missed := !f.lapsed && !f.deadline.IsZero() && !now.Before(f.deadline)
	f.mu.Unlock()
	if missed || !now.Before(deadline) {
		f.lapse("no liveness recorded in time")
	}
	if !now.Before(deadline) {
		return // a record that took longer than the lease renews nothing
	}
	f.mu.Lock()
	stale := f.lapsed && began.Before(f.lapsedAt)
	f.mu.Unlock()
	if stale {
		return
	}

	f.mu.Lock()
	f.deadline = deadline
	if f.timer != nil {
		f.timer.Stop()
	}
	f.timer = time.AfterFunc(deadline.Sub(now), f.expired)
	wasLapsed, restore := f.lapsed, f.heldReady && f.ctx.Err() == nil
	f.lapsed, f.heldReady = false, false
	wd := f.wd
	f.mu.Unlock()
	if wd != nil {
		wd.Until(deadline.Sub(now))
	}
	if restore {
		f.ready.SetReady(true)
		if f.ctx.Err() != nil { // a shutdown began meanwhile: it wins
			f.ready.SetReady(false)
		}
	}
	if wasLapsed {
		f.log.Info("recorded liveness again; taking work again")
	}
}

// expired is the in-process deadline's timer.
func (f *fence) expired() {
	f.mu.Lock()
	due := !f.deadline.IsZero() && !f.now().Before(f.deadline)
	f.mu.Unlock()
	if due {
		f.lapse("no liveness recorded in time")
	}
}

// lapsedNow reports whether the node's liveness has lapsed, by the clock
// too: a node that was frozen sees the deadline passed before its timer
// has had a chance to say so.
func (f *fence) lapsedNow() bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lapsed || !f.stopped && !f.deadline.IsZero() && !f.now().Before(f.deadline)
}

// lapseCount is how many lapses were found so far: a run notes it when its
// job is taken, so one that starts after a lapse has come and gone knows
// it must not go on.
func (f *fence) lapseCount() uint64 {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lapses
}

// lapsedSince reports whether the node's liveness has lapsed now, or did
// at any time since lapseCount returned count.
func (f *fence) lapsedSince(count uint64) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	moved := f.lapses != count
	f.mu.Unlock()
	return moved || f.lapsedNow()
}

// lapse stops the node's runs and its taking of work, once per lapse.
func (f *fence) lapse(cause string) {
	f.mu.Lock()
	if f.lapsed || f.stopped {
		f.mu.Unlock()
		return
	}
	f.lapsed, f.lapsedAt = true, f.now()
	f.lapses++
	if f.timer != nil {
		f.timer.Stop()
	}
	// Declining comes first, so no run starts after the runs are stopped.
	if f.ready.Ready() {
		f.heldReady = true
		f.ready.SetReady(false)
	}
	f.mu.Unlock()
	stopped := f.stopRuns()
	f.log.Warn("could not record liveness within the node lease: stopped this node's jobs, and takes no new ones until it records it again",
		"node_lease", f.lease, "jobs_stopped", stopped, "cause", cause)
}

// stopForLapse kills the node's runs and marks them to go back to RESTART;
// it counts them, with those the watchdog killed already. A run still
// starting is stopped by start, which sees the lapse, even one that is
// over by then: the job may have gone elsewhere meanwhile.
func (r *jobRunner) stopForLapse() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	stopped := 0
	for _, ar := range r.runs {
		if ar.run == nil {
			continue
		}
		if ended(ar) {
			if ar.shutdown || ar.groupKilled {
				stopped++
			}
			continue
		}
		// A run whose process ended on its own meanwhile keeps its result.
		if ar.run.Kill(lapseReason) {
			ar.shutdown = true
			stopped++
		}
	}
	return stopped
}

func (f *fence) watchdog() *watchdog.Client {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wd
}

// runGroup tells the watchdog of one run's process group.
type runGroup struct {
	r  *jobRunner
	ar *activeRun
}

func (g runGroup) WatchGroup(pgid int) {
	if wd := g.r.fence.watchdog(); wd != nil {
		wd.Watch(pgid)
		// Checked first: a burst of short jobs would pay for the line's
		// arguments on every start.
		if g.r.log.Enabled(context.Background(), slog.LevelDebug) {
			g.r.log.Debug("the watchdog watches the run's process group", "job", g.ar.job.ID, "attempt", g.ar.attempt, "pgid", pgid)
		}
	}
}

// ForgetGroup runs before the run's end is known: it notes whether the
// watchdog killed the group, for run.go to weigh against how the leader
// ended.
func (g runGroup) ForgetGroup(pgid int) {
	wd := g.r.fence.watchdog()
	if wd == nil || !wd.Forget(pgid) {
		return
	}
	g.r.mu.Lock()
	g.ar.groupKilled = true
	g.r.mu.Unlock()
}

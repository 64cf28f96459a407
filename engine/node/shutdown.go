package node

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// resultsWait is how long a stopping node waits for the last results to be
// recorded before it keeps them on disk and stops.
const resultsWait = 5 * time.Second

// drain lets running jobs finish within the shutdown grace, then stops the
// rest and puts them back to RESTART so another node runs them.
//
// A result the database has not taken does not hold the node: once the
// runs stopped have had their cancel grace, and the results a last
// resultsWait to be recorded, what is left is kept on disk for the next
// start of this node (replayResults), and the node stops.
func (n *Runtime) drain() {
	n.results.hurry()
	if !n.runner.drain() {
		n.results.keepForNextStart()
	}
}

// drain lets running jobs finish within the shutdown grace, then stops the
// rest, to go back to RESTART, and gives them their cancel grace and their
// results a last resultsWait to be recorded. It reports whether every run
// was done with by then. The books take no work by now, so runsDone cannot
// grow.
func (r *jobRunner) drain() bool {
	done := make(chan struct{})
	go func() { r.runsDone.Wait(); close(done) }()
	if _, running := r.books.Totals(); running > 0 {
		r.log.Info("waiting for running jobs to finish", "jobs", running, "grace", r.cfg.ShutdownGrace)
	}
	select {
	case <-done:
		return true
	case <-time.After(r.cfg.ShutdownGrace):
	}
	wait := resultsWait
	r.mu.Lock()
	r.stopping = true
	for _, ar := range r.runs {
		// One still starting is stopped by start itself; one that has
		// ended keeps its result, which only waits to be recorded.
		switch {
		case ar.run == nil:
			wait = r.cfg.CancelGrace + resultsWait
		case !ended(ar):
			ar.shutdown = true
			ar.run.Cancel("node shutting down", r.cfg.CancelGrace)
			wait = r.cfg.CancelGrace + resultsWait
		}
	}
	r.mu.Unlock()
	select {
	case <-done:
		return true
	case <-time.After(wait):
		return false
	}
}

// hurry ends the batches' lingering for good: a node shutting down records
// results as they come.
func (r *resultRecorder) hurry() { r.batcher.flushNow() }

// keepForNextStart puts every result not yet recorded on disk, for a node
// about to stop, and says how many wait there.
func (r *resultRecorder) keepForNextStart() {
	onDisk, lost := r.batcher.keepAll()
	if lost > 0 {
		r.log.Error("stopping with job results that could be kept neither in the database nor on disk; their jobs run again",
			"results", lost)
	}
	if onDisk > 0 {
		r.log.Warn("stopping with job results the database has not taken; the next start of this node records them",
			"results", onDisk, "dir", r.batcher.spool.dir)
	}
}

// goOffline marks the node OFFLINE and stops its endpoint.
func (n *Runtime) goOffline() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.store.NodeSetState(ctx, n.cfg.Name, engine.NodeOffline); err != nil {
		n.log.Warn("cannot mark node offline", "err", err)
	}
	if n.server != nil {
		_ = n.server.Shutdown(ctx)
	}
	n.log.Info("node stopped")
}

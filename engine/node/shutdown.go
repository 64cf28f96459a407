package node

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// resultsWait is how long a stopping node waits for the last results to be
// recorded before it keeps them on disk and stops.
const resultsWait = 5 * time.Second

// releaseLease hands the lease over at once instead of letting it expire.
func (n *Runtime) releaseLease() {
	if n.holder == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.holder.Release(ctx); err != nil {
		n.log.Warn("cannot release the lease", "err", err)
		return
	}
	n.log.Info("released the dispatcher lease")
}

// drain lets running jobs finish within the shutdown grace, then stops the
// rest and puts them back to RESTART so another node runs them. The books
// take no work by now, so runsDone cannot grow.
//
// A result the database has not taken does not hold the node: once the
// runs stopped have had their cancel grace, and the results a last
// resultsWait to be recorded, what is left is kept on disk for the next
// start of this node (replayResults), and the node stops.
func (n *Runtime) drain() {
	n.completions.flushNow()
	done := make(chan struct{})
	go func() { n.runsDone.Wait(); close(done) }()
	if _, running := n.books.Totals(); running > 0 {
		n.log.Info("waiting for running jobs to finish", "jobs", running, "grace", n.cfg.ShutdownGrace)
	}
	select {
	case <-done:
		return
	case <-time.After(n.cfg.ShutdownGrace):
	}
	wait := resultsWait
	n.mu.Lock()
	n.stopping = true
	for _, ar := range n.runs {
		// One still starting is stopped by start itself; one that has
		// ended keeps its result, which only waits to be recorded.
		switch {
		case ar.run == nil:
			wait = n.cfg.CancelGrace + resultsWait
		case !ended(ar):
			ar.shutdown = true
			ar.run.Cancel("node shutting down", n.cfg.CancelGrace)
			wait = n.cfg.CancelGrace + resultsWait
		}
	}
	n.mu.Unlock()
	select {
	case <-done:
		return
	case <-time.After(wait):
	}
	onDisk, lost := n.completions.keepAll()
	if lost > 0 {
		n.log.Error("stopping with job results that could be kept neither in the database nor on disk; their jobs run again",
			"results", lost)
	}
	if onDisk > 0 {
		n.log.Warn("stopping with job results the database has not taken; the next start of this node records them",
			"results", onDisk, "dir", n.completions.spool.dir)
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

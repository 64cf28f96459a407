package node

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
)

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
	n.mu.Lock()
	n.stopping = true
	for _, ar := range n.runs {
		if ar.run != nil { // one still starting is stopped by start itself
			ar.shutdown = true
			ar.run.Cancel("node shutting down", n.cfg.CancelGrace)
		}
	}
	n.mu.Unlock()
	<-done
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

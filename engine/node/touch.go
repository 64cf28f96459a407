package node

import (
	"context"
	"runtime"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// touchLoop reports liveness and health; a node that others marked OFFLINE
// while it was alive (a partition, a stall) comes back ONLINE. Its jobs were
// restarted elsewhere meanwhile; the reconcile loop stops its copies.
func (n *Runtime) touchLoop(ctx context.Context) {
	every(ctx, n.cfg.NodeLease/5, func() { n.touch(ctx) })
}

// touch is one round of the touch loop. It reports, with the node's
// liveness, what each job process it runs has used so far: the write is
// made anyway, and the report is read from the database like everything
// else, so 'jobctl top' needs no way to the nodes themselves.
func (n *Runtime) touch(ctx context.Context) {
	h := n.health()
	// Dispatchers hold the overload gate against this node's reported
	// figures; judging them here too is what lets the node say so.
	n.noteOverload(h)
	began := time.Now()
	if err := n.store.NodeTouch(ctx, engine.NodeTouchParams{Name: n.cfg.Name, LoadAvg: h.LoadAvg,
		MemAvailable: h.MemAvailable, Cores: runtime.NumCPU(), RunningUsage: n.runningUsage(), Process: &n.process}); err != nil {
		if ctx.Err() == nil {
			n.log.Warn("cannot report liveness", "err", err)
		}
		return
	}
	n.fence.recorded(began)
	if err := n.recoverOrphans(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("cannot check for orphaned jobs", "err", err)
	}
	me, err := n.store.NodeGet(ctx, n.cfg.Name)
	if err != nil {
		return
	}
	n.books.SetMaintenance(me.Maintenance)
	if me.State == engine.NodeOffline {
		n.log.Warn("this node was marked OFFLINE while alive; coming back online")
		if err := n.store.NodeSetState(ctx, n.cfg.Name, engine.NodeOnline); err != nil && ctx.Err() == nil {
			n.log.Warn("cannot set node online", "err", err)
		}
	}
}

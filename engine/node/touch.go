package node

import (
	"context"
	"runtime"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// touchLoop records the node's liveness, with its health, every fifth of
// its node lease, and does nothing else that reads or writes the
// database: its one statement goes on a connection of the store's pool
// while the pool has room, else on one of the store's own
// (engine.Store.NodeTouch), so neither this node's job work, however much
// of it waits for the database, nor a slow listing of its jobs ever holds
// a liveness write up. What the touch learns (maintenance, a node marked
// OFFLINE while alive) is acted on at once or handed to the check loop,
// never waited for here. After each touch the pool's own figures size it
// (touched).
func (l *liveness) touchLoop(ctx context.Context) {
	every(ctx, l.lease/5, func() {
		l.touch(ctx)
		if l.touched != nil {
			l.touched()
		}
	})
}

// touch is one round of the touch loop. It reports, with the node's
// liveness, what each job process it runs has used so far: the write is
// made anyway, and the report is read from the database like everything
// else, so 'jobctl top' needs no way to the nodes themselves. A write
// still unanswered after a node lease could renew nothing
// (fence.recorded), so it is given up then, and the next one starts on a
// fresh connection.
func (l *liveness) touch(ctx context.Context) {
	h := l.health()
	// Dispatchers hold the overload gate against this node's reported
	// figures; judging them here too is what lets the node say so.
	l.noteOverload(h)
	// Read before the write's clock starts, so the time it takes with many
	// runs does not eat into the node lease the write renews.
	usage := l.usage()
	began := time.Now()
	wctx, cancel := context.WithTimeout(ctx, l.lease)
	touched, err := l.store.NodeTouch(wctx, engine.NodeTouchParams{Name: l.name, LoadAvg: h.LoadAvg,
		MemAvailable: h.MemAvailable, Cores: runtime.NumCPU(), RunningUsage: usage, Process: &l.process})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("cannot report liveness", "err", err)
		}
		return
	}
	l.fence.recorded(began)
	l.books.SetMaintenance(touched.Maintenance)
	if touched.State == engine.NodeOffline {
		select {
		case l.markedOffline <- struct{}{}:
		default: // the check loop has it already
		}
	}
}

// orphanCheckInterval is the check loop's mean pace. A job lost without a
// trace is rare (a start whose answer the connection lost, say), and waits
// for it about this long. An idle node looks on the pool connection its
// liveness writes keep open.
const orphanCheckInterval = 30 * time.Second

// orphanCheckWait is the wait before the next look for orphaned jobs: the
// mean pace, spread by random over half to one and a half times it. Nodes
// started together (a fleet restarted, a database back after an outage)
// would otherwise look all at once, each with a pool connection of its own.
func orphanCheckWait(random func() float64) time.Duration {
	return time.Duration((0.5 + random()) * float64(orphanCheckInterval))
}

// checkLoop does the node's own housekeeping that reads or writes job rows,
// on the main pool, apart from the touch loop: it restarts orphaned jobs
// (recoverOrphans) at its own pace, and brings the node back ONLINE when
// the touch loop learns that others marked it OFFLINE while it was alive (a
// partition, a stall). Its jobs were restarted elsewhere meanwhile; the
// reconcile loop stops its copies.
func (l *liveness) checkLoop(ctx context.Context) {
	// The node's start put back what an earlier run left (recoverOwnJobs):
	// the first look comes a wait later.
	t := time.NewTimer(orphanCheckWait(l.random))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.markedOffline:
			l.log.Warn("this node was marked OFFLINE while alive; coming back online")
			if err := l.store.NodeSetState(ctx, l.name, engine.NodeOnline); err != nil && ctx.Err() == nil {
				l.log.Warn("cannot set node online", "err", err)
			}
		case <-t.C:
			if err := l.recoverOrphans(ctx); err != nil && ctx.Err() == nil {
				l.log.Warn("cannot check for orphaned jobs", "err", err)
			}
			t.Reset(orphanCheckWait(l.random))
		}
	}
}

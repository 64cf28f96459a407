package node

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine/dispatch"
)

// jobChanges is a store that says when work may have appeared or capacity
// been freed (engine/dbstore: in-process, and LISTEN/NOTIFY on PostgreSQL).
type jobChanges interface {
	JobChanges(ctx context.Context) (<-chan struct{}, error)
}

// dispatchLoop runs rounds while the node holds the lease. A round starts
// when the pause after the last one is over (dispatch.NextRound) or, sooner,
// when the store reports a change; the interval poll stays the fallback,
// as a notification may be lost, or never come (a transaction pooler lets
// no LISTEN through). Only the lease holder listens for changes: a node
// that does not hold the lease holds no listening connection.
func (s *leaseServices) dispatchLoop(ctx context.Context, d *dispatch.Dispatcher) {
	var wake *wakeUps // nil while the lease is not held
	defer func() {
		if wake != nil {
			wake.stop()
			s.conns.hold(false)
		}
	}()
	for {
		pause, gap, held := s.dispatchOnce(ctx, d)
		switch {
		case held && wake == nil:
			wake = s.listen(ctx)
			s.conns.hold(true)
			// A change between the round's reads and the subscription
			// would wait for the poll: look once more at once.
			continue
		case !held && wake != nil:
			wake.stop()
			wake = nil
			s.conns.hold(false)
		}
		if !held {
			if !sleep(ctx, pause) {
				return
			}
			continue
		}
		if !sleep(ctx, gap) {
			return
		}
		t := time.NewTimer(pause - gap)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-wake.changes:
			t.Stop()
		}
	}
}

// wakeUps is the lease holder's subscription to the store's job changes.
type wakeUps struct {
	changes <-chan struct{} // never delivers when the store cannot report changes
	stop    context.CancelFunc
}

// listen subscribes to the store's job changes until ctx ends or the
// subscription is stopped. A store that cannot report them, or whose
// listener cannot connect, gives a subscription that never delivers: the
// rounds then come at the interval.
func (s *leaseServices) listen(ctx context.Context) *wakeUps {
	ctx, stop := context.WithCancel(ctx)
	w := &wakeUps{changes: make(chan struct{}), stop: stop}
	c, ok := s.store.(jobChanges)
	if !ok {
		return w
	}
	ch, err := c.JobChanges(ctx)
	if err != nil {
		s.log.Warn("no wake-ups from the database; dispatching every interval", "err", err)
		return w
	}
	w.changes = ch
	return w
}

// dispatchOnce renews the lease and, while it is held, runs one round. It
// returns the pause before the next round and the part of it a wake-up
// must wait out. The lease is renewed at most every quarter interval (or
// quarter TTL, if shorter): rounds woken by job changes, many a second
// under load, reuse the last renewal, which with the default TTL of three
// intervals still leaves at least 1.75 intervals of trust.
func (s *leaseServices) dispatchOnce(ctx context.Context, d *dispatch.Dispatcher) (pause, gap time.Duration, held bool) {
	held = s.holder.RenewIfDue(ctx, s.renewEvery())
	s.metrics.leaseHeld.Set(boolGauge(held))
	if !held {
		return s.cfg.DispatchInterval, 0, false
	}
	// A round asks before every slice of its work whether the lease may
	// be trusted; renewing it then when due keeps a long round inside its
	// trust.
	renewing := func() bool { return s.holder.RenewIfDue(ctx, s.renewEvery()) }
	stats, err := d.Round(ctx, renewing)
	s.metrics.rounds.Inc()
	s.metrics.dispatched.Add(float64(stats.Dispatched))
	s.metrics.queueRead.Add(float64(stats.Read))
	if err != nil && ctx.Err() == nil {
		s.log.Warn("dispatch round ended early", "err", err, "dispatched", stats.Dispatched)
	} else if stats.Dispatched+stats.Failed > 0 {
		s.log.Debug("dispatch round", "read", stats.Read, "considered", stats.Considered, "dispatched", stats.Dispatched,
			"failed", stats.Failed)
	}
	pause = dispatch.NextRound(stats, s.cfg.DispatchInterval)
	return pause, min(dispatch.WakeGap(stats, s.cfg.DispatchInterval), pause), true
}

// renewEvery is how often the lease holder renews its lease at most: a
// quarter interval (or quarter TTL, if shorter). Rounds woken by job
// changes, many a second under load, reuse the last renewal, which with the
// default TTL of three intervals still leaves at least 1.75 intervals of
// trust.
func (s *leaseServices) renewEvery() time.Duration {
	return min(s.cfg.DispatchInterval, s.cfg.leaseTTL()) / 4
}

// housekeep runs a pass of the lease holder's housekeeping while the node
// holds the lease.
func (s *leaseServices) housekeep(ctx context.Context, h *dispatch.Housekeeper) {
	if !s.holder.Trusted() {
		return
	}
	stats, err := h.Step(ctx)
	if err != nil && ctx.Err() == nil {
		s.log.Warn("housekeeping", "err", err)
	}
	if stats.Recovered > 0 {
		s.log.Info("housekeeping put jobs back in the queue", "recovered", stats.Recovered)
	}
}

// sleep waits d unless ctx ends first; false when it did.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// every runs f now and then each interval until ctx ends; a slow f delays
// the next run instead of piling runs up.
func every(ctx context.Context, interval time.Duration, f func()) {
	repeat(ctx, func() time.Duration { f(); return interval })
}

// repeat runs f now and again after each delay f returns, until ctx ends.
func repeat(ctx context.Context, f func() time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(f())
		}
	}
}

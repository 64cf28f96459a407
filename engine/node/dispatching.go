package node

import (
	"context"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/placement"
)

// startDispatching runs what a dispatch candidate does beside its own
// work: the lease election with dispatch rounds while it holds the lease,
// and, while it holds it, housekeeping, firing schedules and pruning old
// jobs (with --retain), each paced on its own; and the heartbeats to the
// other nodes.
func (n *Runtime) startDispatching(ctx context.Context, wg *sync.WaitGroup) error {
	selector, err := placement.ParseSelector(n.cfg.Selector)
	if err != nil {
		return err
	}
	for _, p := range n.cfg.Preferred {
		p.Inner = selector
		selector = p
	}
	tlsConfig, err := n.cfg.TLS.ClientConfig()
	if err != nil {
		return err
	}
	// An offer must not outlast the lease's trust: a node that does not
	// answer costs a round at most this long.
	client := endpoint.NewClient(n.token, min(max(n.cfg.leaseTTL()/3, time.Second), 10*time.Second), tlsConfig)
	n.holder = dispatch.NewLeaseHolder(n.store, n.cfg.Name, n.cfg.leaseTTL(), n.clock, n.log)
	d := dispatch.NewDispatcher(n.store, &offerer{self: n, client: client}, selector, n.clock, n.log)
	d.SetLease(n.holder)
	wg.Go(func() { n.dispatchLoop(ctx, d) })
	house := dispatch.NewHousekeeper(n.store, n.holder, n.log)
	wg.Go(func() {
		every(ctx, min(dispatch.HousekeepingInterval, n.cfg.DispatchInterval), func() { n.housekeep(ctx, house) })
	})
	if n.cfg.Retain > 0 {
		r := dispatch.NewRetainer(n.store, n.cfg.Retain, n.holder.Trusted, n.clock, n.log)
		wg.Go(func() { every(ctx, dispatch.RetainCheck, func() { r.Step(ctx) }) })
	}
	wg.Go(func() { n.scheduleLoop(ctx) })
	// Heartbeats get a client of their own: a node slow to answer is not
	// dead, and the offers' short timeout would say it is.
	heartbeatTimeout := dispatch.HeartbeatTimeout(n.cfg.HeartbeatInterval)
	beats := endpoint.NewClient(n.token, heartbeatTimeout, tlsConfig)
	monitor := dispatch.NewMonitor(n.store, n.cfg.Name, beats.Heartbeat, heartbeatTimeout, n.log)
	wg.Go(func() {
		every(ctx, n.cfg.HeartbeatInterval, func() {
			if err := monitor.Beat(ctx); err != nil && ctx.Err() == nil {
				n.log.Warn("heartbeat round failed", "err", err)
			}
		})
	})
	return nil
}

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
func (n *Runtime) dispatchLoop(ctx context.Context, d *dispatch.Dispatcher) {
	var wake *wakeUps // nil while the lease is not held
	defer func() {
		if wake != nil {
			wake.stop()
		}
	}()
	for {
		pause, gap, held := n.dispatchOnce(ctx, d)
		switch {
		case held && wake == nil:
			wake = n.listen(ctx)
			// A change between the round's reads and the subscription
			// would wait for the poll: look once more at once.
			continue
		case !held && wake != nil:
			wake.stop()
			wake = nil
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
func (n *Runtime) listen(ctx context.Context) *wakeUps {
	ctx, stop := context.WithCancel(ctx)
	w := &wakeUps{changes: make(chan struct{}), stop: stop}
	c, ok := n.store.(jobChanges)
	if !ok {
		return w
	}
	ch, err := c.JobChanges(ctx)
	if err != nil {
		n.log.Warn("no wake-ups from the database; dispatching every interval", "err", err)
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
func (n *Runtime) dispatchOnce(ctx context.Context, d *dispatch.Dispatcher) (pause, gap time.Duration, held bool) {
	held = n.holder.RenewIfDue(ctx, n.renewEvery())
	n.metrics.leaseHeld.Set(boolGauge(held))
	if !held {
		return n.cfg.DispatchInterval, 0, false
	}
	// A round asks before every slice of its work whether the lease may
	// be trusted; renewing it then when due keeps a long round inside its
	// trust.
	renewing := func() bool { return n.holder.RenewIfDue(ctx, n.renewEvery()) }
	stats, err := d.Round(ctx, renewing)
	n.metrics.rounds.Inc()
	n.metrics.dispatched.Add(float64(stats.Dispatched))
	n.metrics.queueRead.Add(float64(stats.Read))
	if err != nil && ctx.Err() == nil {
		n.log.Warn("dispatch round ended early", "err", err, "dispatched", stats.Dispatched)
	} else if stats.Dispatched+stats.Failed > 0 {
		n.log.Debug("dispatch round", "read", stats.Read, "considered", stats.Considered, "dispatched", stats.Dispatched,
			"failed", stats.Failed)
	}
	pause = dispatch.NextRound(stats, n.cfg.DispatchInterval)
	return pause, min(dispatch.WakeGap(stats, n.cfg.DispatchInterval), pause), true
}

// renewEvery is how often the lease holder renews its lease at most: a
// quarter interval (or quarter TTL, if shorter). Rounds woken by job
// changes, many a second under load, reuse the last renewal, which with the
// default TTL of three intervals still leaves at least 1.75 intervals of
// trust.
func (n *Runtime) renewEvery() time.Duration {
	return min(n.cfg.DispatchInterval, n.cfg.leaseTTL()) / 4
}

// housekeep runs a pass of the lease holder's housekeeping while the node
// holds the lease.
func (n *Runtime) housekeep(ctx context.Context, h *dispatch.Housekeeper) {
	if !n.holder.Trusted() {
		return
	}
	stats, err := h.Step(ctx)
	if err != nil && ctx.Err() == nil {
		n.log.Warn("housekeeping", "err", err)
	}
	if stats.Recovered > 0 {
		n.log.Info("housekeeping put jobs back in the queue", "recovered", stats.Recovered)
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

// offerer sends offers to other nodes over HTTP and to its own node
// in-process, through the same acceptance code.
type offerer struct {
	self   *Runtime
	client *endpoint.Client
}

func (o *offerer) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	if n.Name == o.self.cfg.Name {
		return o.self.AcceptBatch(ctx, offers)
	}
	return o.client.OfferBatch(ctx, n, offers)
}

// Local reports whether n is this node, whose acceptance runs in-process.
func (o *offerer) Local(n *engine.Node) bool { return n.Name == o.self.cfg.Name }

// StartLocal offers this node jobs as the round read them, in-process.
func (o *offerer) StartLocal(ctx context.Context, term engine.LeaseTerm, jobs []*engine.Job) []engine.OfferResult {
	return o.self.StartLocal(ctx, term, jobs)
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

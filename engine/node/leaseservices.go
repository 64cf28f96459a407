package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/placement"
)

// leaseServices is what a dispatch candidate runs beside its own work: it
// takes part in the lease election and, while this node holds the lease,
// runs the dispatcher's rounds, the housekeeping that puts lost jobs back
// in the queue, the firing of schedules and, with --retain, the pruning of
// old jobs; and it sends the heartbeats to the other nodes. Offers to this
// node go to its runner in-process.
type leaseServices struct {
	cfg     Config
	store   engine.Store // the dispatch and schedule services take it whole
	clock   engine.Clock
	log     *slog.Logger
	metrics *metrics
	local   localAcceptor

	// holder is this node's part in the lease election; nil until start.
	holder *dispatch.LeaseHolder
	// conns sizes the store's pool by whether the lease is held.
	conns *connKeeper
}

// localAcceptor answers this node's own dispatcher's offers in-process
// (jobRunner).
type localAcceptor interface {
	AcceptBatch(ctx context.Context, offers []engine.DispatchOffer) []engine.OfferResult
	StartLocal(ctx context.Context, term engine.LeaseTerm, jobs []*engine.Job) []engine.OfferResult
}

func newLeaseServices(cfg Config, store engine.Store, local localAcceptor, conns *connKeeper, m *metrics, clock engine.Clock,
	log *slog.Logger) *leaseServices {
	return &leaseServices{cfg: cfg, store: store, clock: clock, log: log, metrics: m, local: local, conns: conns}
}

// start runs what a dispatch candidate does beside its own
// work: the lease election with dispatch rounds while it holds the lease,
// and, while it holds it, housekeeping, firing schedules and pruning old
// jobs (with --retain), each paced on its own; and the heartbeats to the
// other nodes.
func (s *leaseServices) start(ctx context.Context, wg *sync.WaitGroup, token string) error {
	selector, err := placement.ParseSelector(s.cfg.Selector)
	if err != nil {
		return err
	}
	for _, p := range s.cfg.Preferred {
		p.Inner = selector
		selector = p
	}
	tlsConfig, err := s.cfg.TLS.ClientConfig()
	if err != nil {
		return err
	}
	// An offer must not outlast the lease's trust: a node that does not
	// answer costs a round at most this long.
	client := endpoint.NewClient(token, min(max(s.cfg.leaseTTL()/3, time.Second), 10*time.Second), tlsConfig)
	s.holder = dispatch.NewLeaseHolder(s.store, s.cfg.Name, s.cfg.leaseTTL(), s.clock, s.log)
	d := dispatch.NewDispatcher(s.store, &offerer{self: s.cfg.Name, local: s.local, client: client}, selector, s.clock, s.log)
	d.SetLease(s.holder)
	wg.Go(func() { s.dispatchLoop(ctx, d) })
	house := dispatch.NewHousekeeper(s.store, s.holder, s.log)
	wg.Go(func() {
		every(ctx, min(dispatch.HousekeepingInterval, s.cfg.DispatchInterval), func() { s.housekeep(ctx, house) })
	})
	if s.cfg.Retain > 0 {
		ret := dispatch.NewRetainer(s.store, s.cfg.Retain, s.holder.Trusted, s.clock, s.log)
		wg.Go(func() { every(ctx, dispatch.RetainCheck, func() { ret.Step(ctx) }) })
	}
	wg.Go(func() { s.scheduleLoop(ctx) })
	// Heartbeats get a client of their own: a node slow to answer is not
	// dead, and the offers' short timeout would say it is.
	heartbeatTimeout := dispatch.HeartbeatTimeout(s.cfg.HeartbeatInterval)
	beats := endpoint.NewClient(token, heartbeatTimeout, tlsConfig)
	monitor := dispatch.NewMonitor(s.store, s.cfg.Name, beats.Heartbeat, heartbeatTimeout, s.log)
	wg.Go(func() {
		every(ctx, s.cfg.HeartbeatInterval, func() {
			if err := monitor.Beat(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("heartbeat round failed", "err", err)
			}
		})
	})
	return nil
}

// release hands the lease over at once instead of letting it expire.
func (s *leaseServices) release() {
	if s.holder == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.holder.Release(ctx); err != nil {
		s.log.Warn("cannot release the lease", "err", err)
		return
	}
	s.log.Info("released the dispatcher lease")
}

// offerer sends offers to other nodes over HTTP and to its own node
// in-process, through the same acceptance code.
type offerer struct {
	self   string // this node's name
	local  localAcceptor
	client *endpoint.Client
}

func (o *offerer) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	if n.Name == o.self {
		return o.local.AcceptBatch(ctx, offers)
	}
	return o.client.OfferBatch(ctx, n, offers)
}

// Local reports whether n is this node, whose acceptance runs in-process.
func (o *offerer) Local(n *engine.Node) bool { return n.Name == o.self }

// StartLocal offers this node jobs as the round read them, in-process.
func (o *offerer) StartLocal(ctx context.Context, term engine.LeaseTerm, jobs []*engine.Job) []engine.OfferResult {
	return o.local.StartLocal(ctx, term, jobs)
}

package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// Node is one running `jobctl serve`.
type Node struct {
	cfg      Config
	store    engine.Store
	clock    engine.Clock
	log      *slog.Logger
	token    string
	handlers map[string]handler
	metrics  *metrics

	listener net.Listener
	server   *http.Server
	url      string

	mu        sync.Mutex
	accepting bool
	stopping  bool // the shutdown grace is over: runs still going are stopped
	// maintenance mirrors the node's flag in the store (refreshed with each
	// touch): a dispatcher that read the node list before it was set may
	// still offer work, which is then declined.
	maintenance bool
	load        float64 // sum of the loads of accepted jobs not yet ended
	runs        map[int64]*activeRun
	runsDone    sync.WaitGroup

	holder *dispatch.LeaseHolder
}

// New checks the configuration and prepares a node; Run starts it.
func New(cfg Config, store engine.Store, clock engine.Clock, log *slog.Logger) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	handlers, err := buildHandlers(cfg)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, store: store, clock: clock, log: log.With("node", cfg.Name),
		handlers: handlers, runs: map[int64]*activeRun{}, metrics: newMetrics()}, nil
}

// URL is the address other nodes reach this node at (valid after Listen).
func (n *Node) URL() string { return n.url }

// Listen binds the endpoint; done separately from Run so callers learn the
// address (and bind errors) before anything is registered.
func (n *Node) Listen() error {
	tlsConfig, err := n.cfg.TLS.serverConfig()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", n.cfg.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", n.cfg.Listen, err)
	}
	scheme := "http"
	if tlsConfig != nil {
		l, scheme = tls.NewListener(l, tlsConfig), "https"
	}
	n.listener = l
	n.url = n.cfg.Advertise
	if n.url == "" {
		n.url = scheme + "://" + advertisedHost(l.Addr().(*net.TCPAddr))
	}
	return nil
}

func advertisedHost(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// Run registers the node and serves until ctx is cancelled, then shuts down
// cleanly: it stops accepting, releases the lease, lets running jobs finish
// within the shutdown grace and puts the rest back to RESTART.
func (n *Node) Run(ctx context.Context) error {
	if n.listener == nil {
		if err := n.Listen(); err != nil {
			return err
		}
	}
	token, err := n.store.ClusterToken(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the cluster token: %w", err)
	}
	n.token = token
	if _, err := n.store.NodeRegister(ctx, engine.NodeRegisterParams{Node: n.row(), StaleAfter: engine.NodeStaleAfter}); err != nil {
		if errors.Is(err, engine.ErrNodeOnline) {
			return fmt.Errorf("%w, or choose another --node name", err)
		}
		return fmt.Errorf("cannot register node %q: %w", n.cfg.Name, err)
	}
	if err := n.recoverOwnJobs(ctx); err != nil {
		return err
	}
	n.server = &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- n.server.Serve(n.listener) }()

	n.mu.Lock()
	n.accepting = true
	n.mu.Unlock()
	n.log.Info("node online", "url", n.url, "max_load", n.cfg.MaxLoad, "services", n.serviceTypes(),
		"dispatch_interval", n.cfg.DispatchInterval)

	// Housekeeping (liveness, operator requests) goes on while running jobs
	// drain at shutdown; dispatching stops first.
	housekeeping, stopHousekeeping := context.WithCancel(context.Background())
	var houseWG sync.WaitGroup
	houseWG.Go(func() { n.touchLoop(housekeeping) })
	houseWG.Go(func() { n.reconcileLoop(housekeeping) })
	dispatching, stopDispatching := context.WithCancel(context.Background())
	var dispatchWG sync.WaitGroup
	if n.cfg.DispatchInterval > 0 {
		err = n.startDispatching(dispatching, &dispatchWG)
	}
	if err == nil {
		select {
		case <-ctx.Done():
		case err = <-serveErr:
			n.log.Error("endpoint stopped", "err", err)
		}
	}

	n.mu.Lock()
	n.accepting = false
	n.mu.Unlock()
	stopDispatching()
	dispatchWG.Wait()
	n.releaseLease()
	n.drain()
	stopHousekeeping()
	houseWG.Wait()
	n.goOffline()
	return err
}

// row is this node as registered in the store.
func (n *Node) row() engine.Node {
	services := make([]engine.NodeService, 0, len(n.handlers))
	for _, t := range n.serviceTypes() {
		h := n.handlers[t]
		services = append(services, engine.NodeService{Type: t, Load: h.load, Timeout: engine.Duration(h.timeout)})
	}
	return engine.Node{
		Name: n.cfg.Name, URL: n.url, MaxLoad: n.cfg.MaxLoad, MaxJobs: n.cfg.MaxJobs, Weight: n.cfg.Weight,
		Warmup: engine.Duration(n.cfg.Warmup), AcceptExceeding: n.cfg.AcceptExceeding,
		Candidate: n.cfg.DispatchInterval > 0, Services: services, State: engine.NodeOnline,
		MaxLoadAvg: n.cfg.MaxLoadAvg, ReservedMemory: n.cfg.ReservedMemory, Cores: runtime.NumCPU(),
	}
}

// recoverOwnJobs restarts jobs a former process of this node left behind:
// they died with it (parent-death signal), so they must run again.
func (n *Node) recoverOwnJobs(ctx context.Context) error {
	jobs, err := n.store.JobList(ctx, engine.JobListParams{Node: n.cfg.Name, Statuses: engine.RecoverableStatuses})
	if err != nil {
		return err
	}
	for _, job := range jobs {
		u := engine.RecoverUpdate(job, "node "+n.cfg.Name+" restarted while it ran")
		if _, err := n.store.JobUpdate(ctx, u); err != nil && !errors.Is(err, engine.ErrConflict) {
			return err
		}
		n.log.Warn("recovered job left by an earlier run of this node", "job", job.ID, "status", u.To)
	}
	return nil
}

func (n *Node) startDispatching(ctx context.Context, wg *sync.WaitGroup) error {
	selector, err := placement.ParseSelector(n.cfg.Selector)
	if err != nil {
		return err
	}
	for _, p := range n.cfg.Preferred {
		p.Inner = selector
		selector = p
	}
	// An offer must not outlast the lease's trust: a node that does not
	// answer costs a round at most this long.
	tlsConfig, err := n.cfg.TLS.clientConfig()
	if err != nil {
		return err
	}
	client := NewClient(n.token, min(max(n.cfg.leaseTTL()/3, time.Second), 10*time.Second), tlsConfig)
	n.holder = dispatch.NewLeaseHolder(n.store, n.cfg.Name, n.cfg.leaseTTL(), n.clock, n.log)
	d := dispatch.NewDispatcher(n.store, &offerer{self: n, client: client}, selector, n.clock, n.log)
	wg.Go(func() { n.dispatchLoop(ctx, d) })
	// Heartbeats get a client of their own: a node slow to answer is not
	// dead, and the offers' short timeout would say it is.
	beats := NewClient(n.token, heartbeatTimeout, tlsConfig)
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

// heartbeatTimeout is how long a node has to answer a heartbeat.
const heartbeatTimeout = 10 * time.Second

// quickRound is the pause before the next round when the last one placed
// work: nodes that finish short jobs within a round have room again at once,
// and waiting a whole interval would cap throughput at one round's worth of
// capacity per interval.
const quickRound = 50 * time.Millisecond

func (n *Node) dispatchLoop(ctx context.Context, d *dispatch.Dispatcher) {
	repeat(ctx, func() time.Duration {
		held := n.holder.Renew(ctx)
		n.metrics.leaseHeld.Set(boolGauge(held))
		if !held {
			return n.cfg.DispatchInterval
		}
		stats, err := d.Round(ctx, n.holder.Trusted)
		n.metrics.rounds.Inc()
		n.metrics.dispatched.Add(float64(stats.Dispatched))
		if err != nil && ctx.Err() == nil {
			n.log.Warn("dispatch round ended early", "err", err, "dispatched", stats.Dispatched)
		} else if stats.Dispatched+stats.Failed+stats.Recovered > 0 {
			n.log.Debug("dispatch round", "considered", stats.Considered, "dispatched", stats.Dispatched,
				"failed", stats.Failed, "recovered", stats.Recovered)
		}
		if stats.Dispatched > 0 {
			return min(quickRound, n.cfg.DispatchInterval)
		}
		return n.cfg.DispatchInterval
	})
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

// touchLoop reports liveness and health; a node that others marked OFFLINE
// while it was alive (a partition, a stall) comes back ONLINE. Its jobs were
// restarted elsewhere meanwhile; the reconcile loop stops its copies.
func (n *Node) touchLoop(ctx context.Context) {
	every(ctx, engine.NodeTouchInterval, func() {
		h := readHealth()
		if err := n.store.NodeTouch(ctx, engine.NodeTouchParams{Name: n.cfg.Name, LoadAvg: h.loadAvg,
			MemAvailable: h.memAvailable, Cores: runtime.NumCPU()}); err != nil {
			if ctx.Err() == nil {
				n.log.Warn("cannot report liveness", "err", err)
			}
			return
		}
		if err := n.recoverOrphans(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("cannot check for orphaned jobs", "err", err)
		}
		me, err := n.store.NodeGet(ctx, n.cfg.Name)
		if err == nil {
			n.mu.Lock()
			n.maintenance = me.Maintenance
			n.mu.Unlock()
		}
		if err == nil && me.State == engine.NodeOffline {
			n.log.Warn("this node was marked OFFLINE while alive; coming back online")
			if err := n.store.NodeSetState(ctx, n.cfg.Name, engine.NodeOnline); err != nil && ctx.Err() == nil {
				n.log.Warn("cannot set node online", "err", err)
			}
		}
	})
}

// releaseLease hands the lease over at once instead of letting it expire.
func (n *Node) releaseLease() {
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

// goOffline marks the node OFFLINE and stops its endpoint.
func (n *Node) goOffline() {
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

// drain lets running jobs finish within the shutdown grace, then stops the
// rest and puts them back to RESTART so another node runs them.
func (n *Node) drain() {
	done := make(chan struct{})
	go func() { n.runsDone.Wait(); close(done) }()
	n.mu.Lock()
	running := len(n.runs)
	n.mu.Unlock()
	if running > 0 {
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

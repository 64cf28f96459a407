package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/placement"
)

// Runtime is one running `jobctl serve`. It is not the node's row in the
// store (engine.Node), which it registers and keeps up to date.
//
// Runtime is the wiring of the node's parts, each with its own state and
// goroutines: the runner (jobRunner) takes offers and runs jobs, in the
// cgroups and temporary directories of jobResources, answering their
// processes through the job API (jobAPI); the result recorder
// (resultRecorder) records how they end; liveness and the fence keep the
// node's record alive and its runs within its node lease; and on a
// dispatch candidate the lease services (leaseServices) run the dispatcher
// and the lease holder's housekeeping. Runtime builds them, handing each
// what it needs of the others, registers the node, serves its endpoint,
// and starts and stops the parts in order.
type Runtime struct {
	cfg     Config
	store   registryStore
	log     *slog.Logger
	token   string
	metrics *metrics

	listener net.Listener
	server   *http.Server
	url      string

	runner    *jobRunner
	resources *jobResources
	api       *jobAPI
	results   *resultRecorder
	fence     *fence
	liveness  *liveness
	services  *leaseServices
	conns     *connKeeper
}

// registryStore is what the runtime itself reads and writes: the cluster
// token, its node's registration and state, and the job counts its
// /metrics serves. Its parts get the store each as they need it.
type registryStore interface {
	ClusterToken(ctx context.Context) (string, error)
	engine.NodeRegistrar
	NodeSetState(ctx context.Context, name string, state engine.NodeState) error
	endpoint.JobCounter
}

// Option changes how a Runtime works, for tests and simulations.
type Option func(*Runtime)

// WithRandom sets the source of the retry backoff's jitter: numbers in
// [0, 1). The default is math/rand/v2's Float64.
func WithRandom(random func() float64) Option {
	return func(n *Runtime) { n.results.random = random }
}

// WithSharedStore tells the node that other nodes of this process share
// its store (a benchmark's fleet): it leaves the size of the store's pool
// as the store's owner set it, as what suits one node would not suit them
// all.
func WithSharedStore() Option {
	return func(n *Runtime) { n.conns.store = nil }
}

// WithHealthReader sets how the node reads its machine's load average and
// free memory. The default, ReadHealth, reads /proc.
func WithHealthReader(read func() HealthReading) Option {
	return func(n *Runtime) { n.liveness.health = read }
}

// New checks the configuration and prepares a node; Run starts it.
func New(cfg Config, store engine.Store, clock engine.Clock, log *slog.Logger, opts ...Option) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	users, err := resolveJobUsers(cfg)
	if err != nil {
		return nil, err
	}
	handlers, err := buildHandlers(cfg, store, users)
	if err != nil {
		return nil, err
	}
	books := placement.NewBooks(placement.BookLimits{MaxLoad: cfg.MaxLoad, MaxJobs: cfg.MaxJobs,
		AcceptExceeding: cfg.AcceptExceeding})
	log = log.With("node", cfg.Name)
	n := &Runtime{cfg: cfg, store: store, log: log, metrics: newMetrics(cfg.Name, books)}
	// The runner needs the recorder, the fence and the job API, and each
	// of them needs the runner: the runner is made first, and told of the
	// others.
	n.resources = newJobResources(cfg, users, log)
	r, err := newJobRunner(cfg, store, handlers, n.resources, books, n.metrics, n.URL, clock, log)
	if err != nil {
		return nil, err
	}
	n.runner = r
	n.results = newResultRecorder(cfg, store, r, n.metrics.completed, rand.Float64, log)
	n.fence = newFence(cfg.NodeLease, books, r.stopForLapse, log)
	n.api = newJobAPI(cfg, store, r, books, n.metrics, log)
	r.results, r.fence, r.tokens = n.results, n.fence, n.api
	n.results.lease = n.fence
	n.conns = newConnKeeper(store, cfg.NodeLease)
	n.liveness = newLiveness(cfg, store, n.fence, books, r.runningUsage, r.recoverOrphans, n.metrics.overloaded, log)
	n.liveness.touched = n.conns.look
	n.services = newLeaseServices(cfg, store, r, n.conns, n.metrics, clock, log)
	for _, o := range opts {
		o(n)
	}
	return n, nil
}

// URL is the address other nodes reach this node at (valid after Listen).
func (n *Runtime) URL() string { return n.url }

// Listen binds the endpoint; done separately from Run so callers learn the
// address (and bind errors) before anything is registered.
func (n *Runtime) Listen() error {
	l, url, err := endpoint.Listen(n.cfg.Listen, n.cfg.Advertise, n.cfg.TLS)
	if err != nil {
		return err
	}
	n.listener, n.url = l, url
	return nil
}

// Handler serves this node's endpoint; valid once the cluster token is
// known (Run reads it).
func (n *Runtime) Handler() http.Handler {
	return endpoint.NewHandler(endpoint.HandlerConfig{Token: n.token, Acceptor: n.runner,
		Metrics: n.metrics.registry, MetricsAuth: n.cfg.MetricsAuth, Jobs: n.store, JobAPI: n.api})
}

// Run registers the node and serves until ctx is cancelled, then shuts down
// cleanly: it stops accepting, releases the lease, lets running jobs finish
// within the shutdown grace and puts the rest back to RESTART.
func (n *Runtime) Run(ctx context.Context) error {
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
	n.liveness.process = ThisProcess()
	row := n.row()
	row.Process = n.liveness.process
	began := time.Now()
	if _, err := engine.RegisterNode(ctx, n.store, engine.NodeRegisterParams{Node: row, ProcessGone: ProcessGone}); err != nil {
		if errors.Is(err, engine.ErrNodeOnline) {
			return fmt.Errorf("%w, or choose another --node name", err)
		}
		return fmt.Errorf("cannot register node %q: %w", n.cfg.Name, err)
	}
	if err := n.fence.start(ctx, began); err != nil {
		return err
	}
	defer n.fence.stop()
	n.resources.openCgroups()
	defer n.resources.closeCgroups()
	if err := n.resources.openTempDirs(); err != nil {
		return err
	}
	if err := n.results.replayResults(ctx); err != nil {
		return err
	}
	if err := n.runner.recoverOwnJobs(ctx); err != nil {
		return err
	}
	n.server = &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- n.server.Serve(n.listener) }()

	// Until it holds the lease, the node keeps one pool connection unused.
	n.conns.hold(false)
	n.runner.books.SetReady(true)
	n.log.Info("node online", "url", n.url, "max_load", n.cfg.MaxLoad, "services", n.runner.serviceTypes(),
		"dispatch_interval", n.cfg.DispatchInterval)
	n.liveness.logOverloadLimits()

	// Housekeeping (liveness, orphans, operator requests) goes on while
	// running jobs drain at shutdown; dispatching stops first. Liveness
	// has a loop of its own that does nothing else.
	housekeeping, stopHousekeeping := context.WithCancel(context.Background())
	var houseWG sync.WaitGroup
	houseWG.Go(func() { n.liveness.touchLoop(housekeeping) })
	houseWG.Go(func() { n.liveness.checkLoop(housekeeping) })
	houseWG.Go(func() { n.runner.reconcileLoop(housekeeping) })
	dispatching, stopDispatching := context.WithCancel(context.Background())
	var dispatchWG sync.WaitGroup
	if n.cfg.DispatchInterval > 0 {
		err = n.services.start(dispatching, &dispatchWG, n.token)
	}
	if err == nil {
		select {
		case <-ctx.Done():
		case err = <-serveErr:
			n.log.Error("endpoint stopped", "err", err)
		}
	}

	n.runner.books.SetReady(false)
	stopDispatching()
	dispatchWG.Wait()
	n.services.release()
	n.drain()
	n.resources.closeTempDirs()
	stopHousekeeping()
	houseWG.Wait()
	n.goOffline()
	return err
}

// row is this node as registered in the store.
func (n *Runtime) row() engine.Node {
	services := make([]engine.NodeService, 0, len(n.runner.handlers))
	for _, t := range n.runner.serviceTypes() {
		h := n.runner.handlers[t]
		services = append(services, engine.NodeService{Type: t, Load: h.load, Timeout: engine.Duration(h.timeout), Memory: h.memory})
	}
	return engine.Node{
		Name: n.cfg.Name, URL: n.url, MaxLoad: n.cfg.MaxLoad, MaxJobs: n.cfg.MaxJobs, Weight: n.cfg.Weight,
		Warmup: engine.Duration(n.cfg.Warmup), AcceptExceeding: n.cfg.AcceptExceeding,
		Candidate: n.cfg.DispatchInterval > 0, Services: services, State: engine.NodeOnline,
		MaxLoadAvg: n.cfg.MaxLoadAvg, ReservedMemory: n.cfg.ReservedMemory, Cores: runtime.NumCPU(),
		Lease: engine.Duration(n.cfg.NodeLease),
	}
}

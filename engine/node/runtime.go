package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/cgroup"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/jobuser"
	"github.com/jobctl/jobctl/engine/placement"
)

// Runtime is one running `jobctl serve`. It is not the node's row in the
// store (engine.Node), which it registers and keeps up to date.
type Runtime struct {
	cfg      Config
	store    engine.Store
	clock    engine.Clock
	log      *slog.Logger
	token    string
	handlers map[string]handler
	// users are who jobs run as besides the node's own user; tempDirs
	// hold their attempts' temporary directories (nil without users).
	users    jobUsers
	tempDirs *jobuser.TempDirs
	// caFile is this node's certificate, as an absolute path, when it
	// serves HTTPS: its jobs trust it for their requests to it.
	caFile  string
	metrics *metrics
	random  func() float64       // jitter of retry backoffs
	health  func() HealthReading // this machine's load average and free memory

	listener net.Listener
	server   *http.Server
	url      string

	// books hold the load and count of accepted jobs, whether the node
	// takes work and whether it is in maintenance.
	books *placement.Books
	// runsDone counts accepted runs not yet finished with; a shutdown
	// waits on it. Books.Take adds to it, so no run slips past a drain.
	runsDone sync.WaitGroup

	mu       sync.Mutex
	stopping bool // the shutdown grace is over: runs still going are stopped
	runs     map[int64]*activeRun
	overload engine.Overload // as last seen by the touch loop

	holder *dispatch.LeaseHolder

	// process is this process as registered: its touches apply only while
	// the row still names it.
	process engine.NodeProcess

	// fence stops this node's runs when it cannot record its liveness for
	// its node lease, and when the node itself dies.
	fence *fence
	// markedOffline carries, from the touch loop to the check loop, that
	// others marked this node OFFLINE while it was alive.
	markedOffline chan struct{}

	// completions records the results of finished runs in batches.
	completions *completionBatcher
	// progress stores the progress running jobs report.
	progress *progressWriter
	// jobTokens let job processes reach their own job's API here.
	jobTokens jobTokens
	// cgroups make a cgroup for each job process's run; nil when the
	// machine lets the node make none.
	cgroups *cgroup.Manager
}

// Option changes how a Runtime works, for tests and simulations.
type Option func(*Runtime)

// WithRandom sets the source of the retry backoff's jitter: numbers in
// [0, 1). The default is math/rand/v2's Float64.
func WithRandom(random func() float64) Option {
	return func(n *Runtime) { n.random = random }
}

// WithHealthReader sets how the node reads its machine's load average and
// free memory. The default, ReadHealth, reads /proc.
func WithHealthReader(read func() HealthReading) Option {
	return func(n *Runtime) { n.health = read }
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
	n := &Runtime{cfg: cfg, store: store, clock: clock, log: log.With("node", cfg.Name),
		handlers: handlers, runs: map[int64]*activeRun{}, metrics: newMetrics(cfg.Name, books),
		random: rand.Float64, health: ReadHealth, markedOffline: make(chan struct{}, 1), books: books}
	n.users = users
	if cfg.TLS.CertFile != "" {
		if n.caFile, err = filepath.Abs(cfg.TLS.CertFile); err != nil {
			return nil, fmt.Errorf("--tls-cert: %w", err)
		}
	}
	n.progress = newProgressWriter(store, n.log, progressInterval)
	n.fence = newFence(n)
	n.completions = n.newCompletions()
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
	return endpoint.NewHandler(endpoint.HandlerConfig{Token: n.token, Acceptor: n,
		Metrics: n.metrics.registry, MetricsAuth: n.cfg.MetricsAuth, Jobs: n.store, JobAPI: n})
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
	n.process = ThisProcess()
	row := n.row()
	row.Process = n.process
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
	n.openCgroups()
	defer n.closeCgroups()
	if err := n.openTempDirs(); err != nil {
		return err
	}
	if err := n.replayResults(ctx); err != nil {
		return err
	}
	if err := n.recoverOwnJobs(ctx); err != nil {
		return err
	}
	n.server = &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- n.server.Serve(n.listener) }()

	n.books.SetReady(true)
	n.log.Info("node online", "url", n.url, "max_load", n.cfg.MaxLoad, "services", n.serviceTypes(),
		"dispatch_interval", n.cfg.DispatchInterval)
	n.logOverloadLimits()

	// Housekeeping (liveness, orphans, operator requests) goes on while
	// running jobs drain at shutdown; dispatching stops first. Liveness
	// has a loop of its own that does nothing else.
	housekeeping, stopHousekeeping := context.WithCancel(context.Background())
	var houseWG sync.WaitGroup
	houseWG.Go(func() { n.touchLoop(housekeeping) })
	houseWG.Go(func() { n.checkLoop(housekeeping) })
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

	n.books.SetReady(false)
	stopDispatching()
	dispatchWG.Wait()
	n.releaseLease()
	n.drain()
	if n.tempDirs != nil {
		n.tempDirs.Close()
	}
	stopHousekeeping()
	houseWG.Wait()
	n.goOffline()
	return err
}

// row is this node as registered in the store.
func (n *Runtime) row() engine.Node {
	services := make([]engine.NodeService, 0, len(n.handlers))
	for _, t := range n.serviceTypes() {
		h := n.handlers[t]
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

// recoverOwnJobs restarts jobs a former process of this node left behind:
// they died with it (its watchdog killed them), so they must run again.
func (n *Runtime) recoverOwnJobs(ctx context.Context) error {
	jobs, err := n.store.JobList(ctx, engine.JobListParams{Node: n.cfg.Name, Statuses: engine.RecoverableStatuses})
	if err != nil {
		return err
	}
	return n.recoverJobs(ctx, jobs, "node "+n.cfg.Name+" restarted while it ran", "recovered job left by an earlier run of this node")
}

// recoverJobs puts back jobs this node's books do not hold, with the
// children of their attempts (engine.RecoverJobs), and logs each one put
// back with the note said. Children it could not cancel are the lease
// holder's repair sweep's; they only warrant a warning here.
func (n *Runtime) recoverJobs(ctx context.Context, jobs []*engine.Job, why, said string) error {
	results, err := engine.RecoverJobs(ctx, n.store, jobs, why, engine.Actor{}, engine.VerbEvent{})
	if results == nil {
		return err
	}
	if err != nil {
		n.log.Warn("cannot cancel the children of all recovered jobs", "err", err)
	}
	for i, r := range results {
		if r.Err == nil {
			n.log.Warn(said, "job", jobs[i].ID, "status", r.Job.Status)
		}
	}
	return nil
}

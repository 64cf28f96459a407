package node

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
	"github.com/jobctl/jobctl/engine/runner"
	"github.com/jobctl/jobctl/engine/watchdog"
)

// jobRunner runs the jobs this node takes. It answers dispatch offers
// against its books, starts the accepted runs, follows the operator's
// requests for them (cancel, pause, resume), stops those whose job was
// taken from this node or that a lapse or a shutdown ends, puts back jobs
// the store says run here that it has no run of, and hands each run's end
// to the result recorder. It owns the books and the active runs; a run
// stays on the books until its result is recorded or dropped. Its runs'
// processes reach the node through the job API (jobAPI).
type jobRunner struct {
	cfg      Config
	store    runnerStore
	clock    engine.Clock
	log      *slog.Logger
	handlers map[string]handler
	// resources are the cgroups and temporary directories of the runs.
	resources *jobResources
	// caFile is this node's certificate, as an absolute path, when it
	// serves HTTPS: its jobs trust it for their requests to it.
	caFile string
	// url is the address the node's jobs reach it at (valid after Listen).
	url     func() string
	metrics *metrics

	// books hold the load and count of accepted jobs, whether the node
	// takes work and whether it is in maintenance.
	books *placement.Books
	// runsDone counts accepted runs not yet finished with; a shutdown
	// waits on it. Books.Take adds to it, so no run slips past a drain.
	runsDone sync.WaitGroup

	mu       sync.Mutex
	stopping bool // the shutdown grace is over: runs still going are stopped
	runs     map[int64]*activeRun

	// fence says whether the node's liveness lapsed since a run's job was
	// taken, and watches the runs' process groups.
	fence runFence
	// results records how runs ended.
	results resultSink
	// putBack puts jobs back in the queue with the children of their
	// attempts (engine.RecoverJobs), for the reason given.
	putBack func(ctx context.Context, jobs []*engine.Job, why string) ([]engine.JobUpdateResult, error)
	// progress stores the progress running jobs report.
	progress *progressWriter
	// tokens let job processes reach their own job's API here.
	tokens tokenIssuer
}

// newJobRunner is the runner of node cfg.Name, running jobs with handlers,
// in resources, on books; url is where its jobs reach the node. store carries
// out the engine operation the runner asks for (recovering jobs) besides
// its own reads and writes. The fence, the result recorder and the job
// API's tokens are set by the caller.
func newJobRunner(cfg Config, store engine.Store, handlers map[string]handler, resources *jobResources, books *placement.Books,
	m *metrics, url func() string, clock engine.Clock, log *slog.Logger) (*jobRunner, error) {
	r := &jobRunner{cfg: cfg, store: store, clock: clock, log: log, handlers: handlers, resources: resources, url: url,
		metrics: m, books: books, runs: map[int64]*activeRun{}, progress: newProgressWriter(store, log, progressInterval),
		putBack: func(ctx context.Context, jobs []*engine.Job, why string) ([]engine.JobUpdateResult, error) {
			return engine.RecoverJobs(ctx, store, jobs, why, engine.Actor{}, engine.VerbEvent{})
		}}
	if cfg.TLS.CertFile != "" {
		var err error
		if r.caFile, err = filepath.Abs(cfg.TLS.CertFile); err != nil {
			return nil, fmt.Errorf("--tls-cert: %w", err)
		}
	}
	return r, nil
}

// runnerStore is what the runner reads and writes itself: the jobs it
// starts and follows, and their logs.
type runnerStore interface {
	JobGet(ctx context.Context, id int64) (*engine.Job, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
	JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error)
	JobStartMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error)
	JobLogAppend(ctx context.Context, p engine.JobLogAppendParams) error
}

// tokenIssuer makes the token of a run about to start (jobAPI).
type tokenIssuer interface {
	issueJobToken(jobID int64, attempt int) (string, error)
}

// runFence is what the runner needs of the fence (fence.go).
type runFence interface {
	// lapseCount is how many lapses were found so far.
	lapseCount() uint64
	// lapsedSince reports whether liveness lapsed since lapseCount said count.
	lapsedSince(count uint64) bool
	// endLease is how a run that ends now stands to the node lease.
	endLease() runEndLease
	// watchdog is the process that kills the runs' groups when the node
	// cannot; nil when there is none.
	watchdog() *watchdog.Client
}

// resultSink is what the runner needs of the result recorder
// (resultRecorder).
type resultSink interface {
	// add queues a run's result to be recorded.
	add(c *completion)
	// recorded counts and logs a result the store took.
	recorded(ar *activeRun, u engine.JobUpdate, res runner.Result)
	// holds reports whether a result of job id waits on disk.
	holds(id int64) bool
}

// stopState is how a run is being stopped: fenced (its job was taken from
// this node) and shutdown (the node stopped it: back to RESTART).
func (r *jobRunner) stopState(ar *activeRun) (fenced, shutdown bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ar.fenced, ar.shutdown
}

// liveRun is the run a grant is for, while that attempt of the job is this
// node's and has not ended, and whether its process has started: ar.run is
// set apart from the offer's answer, so it is read here, under the lock.
// Once started, ar.run no longer changes.
func (r *jobRunner) liveRun(g tokenGrant) (ar *activeRun, started, live bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ar = r.runs[g.jobID]
	if ar == nil || ar.job == nil || ar.attempt != g.attempt || ar.refused || ar.fenced {
		return nil, false, false
	}
	if ar.run == nil {
		return ar, false, true
	}
	select {
	case <-ar.run.Done():
		return nil, false, false
	default:
	}
	return ar, true, true
}

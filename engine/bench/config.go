package bench

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/node"
)

// Workload modes, as -o json names them.
const (
	ModeBurnDown = "burn-down"
	ModeDuration = "duration"
)

// DefaultMaxJobs is how many jobs each benchmark node runs at once. A run
// holds its place on the node's books from its offer until its end is
// recorded in the database, so at ten thousand short jobs a second several
// thousand are in that pipeline at any moment: a node of a thousand places
// capped a burn-down at about 10,000 jobs/s on the machine it was measured
// on, and one of ten thousand no longer did (20,400). At this size the
// node's books are never what limits the figure: the dispatcher, the
// handshake and the store are.
const DefaultMaxJobs = 10000

// JobLoad is the load of every benchmark job. A node's max load is set to
// its max jobs, so load and job count run out together and --max-jobs alone
// sizes a node.
const JobLoad = 1.0

// Config is one benchmark run.
type Config struct {
	Store engine.Store
	Clock engine.Clock // paces the workload; the figures use the database's clock
	Log   *slog.Logger // the nodes' log; nil discards it

	BurnDown int           // jobs to insert before the nodes start; or
	Duration time.Duration // how long to insert and work at once
	Rate     float64       // with Duration: jobs offered per second; 0: as fast as inserts go, with a bounded backlog

	Cluster          bool          // the running cluster works the jobs; no nodes of our own
	Nodes            int           // in-process nodes to start (not with Cluster)
	MaxJobs          int           // per in-process node; 0: DefaultMaxJobs
	DispatchInterval time.Duration // of the in-process nodes; 0: the node default

	// Creator is the creator of the benchmark's jobs; "" picks
	// "bench-<pid>-<time>".
	Creator string
	// NodePrefix names the in-process nodes PREFIX-1, PREFIX-2, …; "" picks
	// "bench-<pid>".
	NodePrefix string
	// Progress, if set, is called about once a PollInterval while the run
	// goes on, and after each step of the clean-up.
	Progress func(Progress)
	// Measured, if set, is handed the figures as soon as they are known,
	// before the clean-up, so they are out however long that takes or
	// should it fail. An error from it is Run's.
	Measured func(*Result) error
	// Keep leaves the run's jobs in the database: the clean-up only
	// removes its nodes.
	Keep bool
	// PollInterval is how often the run reads its jobs' counts; 0: a
	// second. Each look counts the run's jobs that have not ended, which
	// reads every one of them: on two cores, twice a second took a tenth
	// of the CPU the engine is measured with, so a look that takes long
	// also puts off the next (lookSpacing). The figures come from the
	// jobs' own timestamps, so how often the run looks does not change
	// them.
	PollInterval time.Duration
	// StallTimeout ends a run in which no job has ended for this long, as
	// nothing is working the queue; 0: one minute.
	StallTimeout time.Duration
}

// Phases of a run, as Progress reports them.
const (
	PhaseInserting  = "inserting" // jobs are inserted before the nodes start
	PhaseWorking    = "working"
	PhaseCleaningUp = "cleaning up" // the run's jobs and nodes are being removed
)

// Progress is how far a run is.
type Progress struct {
	Phase    string // one of the Phase constants
	Inserted int
	Done     int           // jobs ended
	Total    int           // of a burn-down; 0 for a run of a fixed duration
	Removed  int           // jobs the clean-up removed so far
	Rate     float64       // jobs ended per second since the nodes started
	Elapsed  time.Duration // since the nodes started, or the run when none has
}

// ErrNoClusterNode refuses --cluster when the cluster cannot work the
// benchmark's jobs.
var ErrNoClusterNode = errors.New("no ONLINE node of the cluster runs noop jobs while another dispatches them; start one with 'jobctl serve' or leave out --cluster")

// Validate reports the first setting that cannot work; zero fields take
// their defaults. It does not look at the store.
func (c *Config) Validate() error {
	switch {
	case c.BurnDown < 0:
		return fmt.Errorf("--burn-down must be a positive number of jobs, not %d", c.BurnDown)
	case c.Duration < 0:
		return fmt.Errorf("--duration must be positive, not %s", c.Duration)
	case (c.BurnDown > 0) == (c.Duration > 0):
		return errors.New("give exactly one of --burn-down N and --duration D")
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("--rate must be a positive number of jobs per second, not %v", c.Rate)
	case c.Rate > 0 && c.Duration == 0:
		return errors.New("--rate needs --duration: a burn-down inserts all its jobs first")
	case c.Cluster && c.Nodes != 0:
		return errors.New("--cluster uses the cluster's nodes; leave out --nodes")
	case !c.Cluster && c.Nodes < 1:
		return fmt.Errorf("--nodes must be at least 1, not %d", c.Nodes)
	case c.MaxJobs < 0:
		return fmt.Errorf("--max-jobs must be at least 1, not %d", c.MaxJobs)
	case c.DispatchInterval < 0:
		return fmt.Errorf("--dispatch-interval must be positive, not %s", c.DispatchInterval)
	}
	return nil
}

// withDefaults fills in what was left zero.
func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = engine.SystemClock{}
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.MaxJobs == 0 {
		c.MaxJobs = DefaultMaxJobs
	}
	if c.DispatchInterval == 0 {
		c.DispatchInterval = node.Defaults().DispatchInterval
	}
	if c.Creator == "" {
		c.Creator = fmt.Sprintf("bench-%d-%s", os.Getpid(), c.Clock.Now().UTC().Format("20060102T150405.000"))
	}
	if c.NodePrefix == "" {
		c.NodePrefix = fmt.Sprintf("bench-%d", os.Getpid())
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = time.Minute
	}
	return c
}

func (c *Config) mode() string {
	if c.BurnDown > 0 {
		return ModeBurnDown
	}
	return ModeDuration
}

package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/bench"
	"github.com/jobctl/jobctl/engine/node"
)

// BenchOptions are the parsed flags of `jobctl bench`.
type BenchOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	BurnDown         int
	Duration         time.Duration
	Rate             float64
	Nodes            int
	Cluster          bool
	MaxJobs          int
	DispatchInterval time.Duration
	Keep             bool
	Output           outputOptions
}

// NewCmdBench builds `jobctl bench`. runF replaces the action in tests.
func NewCmdBench(f *Factory, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{IO: f.IO, Store: f.Store, Clock: f.Clock}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure job throughput and latency on the configured database",
		Long: `Measure how many jobs a second the engine gets through, and how long a job
waits from submission to start, on the configured database with real nodes.

--burn-down N inserts N noop jobs in bulk, then starts the nodes and times
them until every job has ended: the time runs from the nodes' start to the
last job's end. --duration D starts the nodes and inserts while they work,
for D: at --rate R jobs a second, or else as fast as the inserts go while
keeping a bounded backlog (the most of 1000 jobs, twice what the nodes run at
once, and twice what ends between two of the run's looks at its counts, a
second apart or more, at the current rate; filled before the nodes start),
so the queue stays full but does not grow. Give exactly one of the
two. In a burn-down the latency
includes the time the jobs were queued before the nodes started; a run at a
--rate the engine keeps up with measures the latency of the engine itself.

--nodes K starts K real nodes in this process, named bench-<pid>-1 to -K,
each with its own HTTP endpoint on 127.0.0.1 and each a dispatch candidate:
the one holding the lease offers work to the others over HTTP, as to remote
nodes. Each runs --max-jobs jobs at once, and its max load equals that
number while every job has load 1, so the engine, not a node's size, is what
is measured; the load-average gate is off, as the benchmark itself loads the
machine. Other ONLINE nodes on the same database take part too (the run says
so); use a database no cluster works on, or --cluster: then no node is
started and the running cluster does the work, and the run is refused when
no ONLINE node runs noop jobs while one dispatches.

The table shows the jobs that ended, the seconds measured, jobs per second,
and the 50th, 95th and 99th percentile of submit-to-start latency, all from
the jobs' own timestamps on the database's clock. -o wide adds the mode,
the database and the number of nodes. Piped, it prints one "name TAB value"
line per figure, named as -o json names them, in its units (jobs, seconds,
jobs_per_second, latency_p50_ms, latency_p95_ms, latency_p99_ms, mode,
dialect, nodes). -o json prints {"jobs_per_second", "latency_p50_ms",
"latency_p95_ms", "latency_p99_ms", "jobs", "seconds", "dialect", "nodes",
"mode"}. Progress goes to stderr when it is a terminal.

The benchmark's jobs carry a creator of their own (bench-<pid>-<time>).
The figures are printed as soon as the last job has ended; then, and also
on Ctrl-C (exit 130), what is still queued is cancelled, the nodes stop,
and its jobs and nodes are removed from the database, a few thousand jobs
a statement, found by their ids (progress on a terminal). --keep leaves
the jobs there to look at ('jobctl list', 'jobctl show'); only the nodes go.
A clean-up that fails prints the figures all the same, says what it left,
and exits 1. Bad flags and a refused --cluster exit 2. The figures depend
on the database and the machine; compare runs on the same ones.`,
		Example: `  # how fast does one node work through 20000 jobs on the default SQLite file?
  jobctl bench --burn-down 20000

  # the same on PostgreSQL with three nodes talking over HTTP
  jobctl bench --db postgres://jobctl@localhost/bench --burn-down 20000 --nodes 3

  # latency at a steady 500 jobs a second for a minute
  jobctl bench --duration 1m --rate 500

  # the running cluster, as fast as it goes, for a script
  jobctl bench --cluster --duration 30s -o json

  # keep the jobs afterwards, to look at their attempts and timings
  jobctl bench --burn-down 1000 --keep`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkBench(cmd, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return benchRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.BurnDown, "burn-down", 0, "insert this many jobs first, then time the nodes working through them")
	fl.DurationVar(&opts.Duration, "duration", 0, "insert and work at once for this long")
	fl.Float64Var(&opts.Rate, "rate", 0, "with --duration: offer this many jobs a second (default: as fast as inserts go)")
	fl.IntVar(&opts.Nodes, "nodes", 1, "nodes to start in this process")
	fl.BoolVar(&opts.Cluster, "cluster", false, "start no nodes: the running cluster does the work")
	fl.IntVar(&opts.MaxJobs, "max-jobs", bench.DefaultMaxJobs, "jobs each node runs at once (its max load is the same)")
	fl.DurationVar(&opts.DispatchInterval, "dispatch-interval", node.Defaults().DispatchInterval,
		"time between the nodes' dispatch rounds, as serve's --dispatch-interval")
	fl.BoolVar(&opts.Keep, "keep", false, "leave the benchmark's jobs in the database afterwards")
	addOutputFlags(cmd, &opts.Output, false)
	addHeaderFlags(cmd)
	return cmd
}

// checkBench refuses flag combinations that cannot be run.
func checkBench(cmd *cobra.Command, opts *BenchOptions) error {
	fl := cmd.Flags()
	if opts.Cluster {
		for _, name := range []string{"nodes", "max-jobs", "dispatch-interval"} {
			if fl.Changed(name) {
				return usageErrorf(cmd, "--%s sets the benchmark's own nodes; --cluster starts none", name)
			}
		}
	}
	// Zero means "the default" to the engine; given on the command line it
	// is a mistake.
	switch {
	case fl.Changed("burn-down") && opts.BurnDown == 0:
		return usageErrorf(cmd, "invalid --burn-down 0: must be at least 1")
	case fl.Changed("duration") && opts.Duration == 0:
		return usageErrorf(cmd, "invalid --duration 0s: must be positive")
	case fl.Changed("rate") && opts.Rate == 0:
		return usageErrorf(cmd, "invalid --rate 0: must be a positive number of jobs a second")
	case opts.MaxJobs == 0:
		return usageErrorf(cmd, "invalid --max-jobs 0: must be at least 1")
	case opts.DispatchInterval == 0:
		return usageErrorf(cmd, "invalid --dispatch-interval 0s: must be positive, or the nodes never dispatch")
	}
	cfg := benchConfig(opts)
	if err := cfg.Validate(); err != nil {
		return usageErrorf(cmd, "%v", err)
	}
	return nil
}

// benchConfig is the engine's view of the flags, without the store.
func benchConfig(opts *BenchOptions) bench.Config {
	cfg := bench.Config{Clock: opts.Clock, BurnDown: opts.BurnDown, Duration: opts.Duration, Rate: opts.Rate,
		Cluster: opts.Cluster, Nodes: opts.Nodes, MaxJobs: opts.MaxJobs, DispatchInterval: opts.DispatchInterval,
		Keep: opts.Keep}
	if opts.Cluster {
		cfg.Nodes = 0
	}
	return cfg
}

func benchRun(ctx context.Context, opts *BenchOptions) error {
	tuneGCForServing()
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	progress := newBenchProgress(opts.IO)
	cfg := benchConfig(opts)
	cfg.Store = store
	cfg.Progress = progress.show
	// The nodes say only what needs attention, on the progress writer,
	// which keeps their lines and the progress line apart.
	cfg.Log = slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The figures go out before the clean-up, which may take a while.
	cfg.Measured = func(res *bench.Result) error {
		progress.clear()
		return printBench(opts, res)
	}
	_, err = bench.Run(ctx, cfg)
	progress.clear()
	if errors.Is(err, bench.ErrNoClusterNode) {
		return &UsageError{Err: err, Command: "jobctl bench"}
	}
	return err
}

// printBench prints a run's figures, and notes on stderr of what may
// colour them.
func printBench(opts *BenchOptions, res *bench.Result) error {
	if res.OtherNodes > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "note: %d other ONLINE %s of this database took part in the run\n",
			res.OtherNodes, plural(res.OtherNodes, "node", "nodes"))
	}
	if res.NotFinished > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "note: %d of the %d jobs ended other than FINISHED\n", res.NotFinished, res.Jobs)
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, res)
	}
	return printBenchTable(opts, res)
}

func printBenchTable(opts *BenchOptions, res *bench.Result) error {
	if !opts.IO.OutIsTerminal {
		return printBenchPiped(opts.IO, res)
	}
	header := []string{"JOBS", "SECONDS", "JOBS/S", "P50 LATENCY", "P95 LATENCY", "P99 LATENCY"}
	row := []string{fmt.Sprint(res.Jobs), fmt.Sprintf("%.3f", res.Seconds), fmt.Sprintf("%.1f", res.JobsPerSecond),
		millisCell(res.LatencyP50Ms), millisCell(res.LatencyP95Ms), millisCell(res.LatencyP99Ms)}
	if opts.Output.wide() {
		header = append(header, "MODE", "DATABASE", "NODES")
		row = append(row, res.Mode, res.Dialect, fmt.Sprint(res.Nodes))
	}
	t := newTable(opts.IO, header...)
	t.addRow(row...)
	return t.render()
}

// printBenchPiped prints the result for a script: one "name TAB value"
// line per figure, named and in the units of -o json.
func printBenchPiped(ios *IOStreams, res *bench.Result) error {
	kv := &keyValues{ios: ios}
	kv.add("jobs", fmt.Sprint(res.Jobs))
	kv.add("seconds", fmt.Sprintf("%.3f", res.Seconds))
	kv.add("jobs_per_second", fmt.Sprintf("%.1f", res.JobsPerSecond))
	kv.add("latency_p50_ms", fmt.Sprintf("%.1f", res.LatencyP50Ms))
	kv.add("latency_p95_ms", fmt.Sprintf("%.1f", res.LatencyP95Ms))
	kv.add("latency_p99_ms", fmt.Sprintf("%.1f", res.LatencyP99Ms))
	kv.add("mode", res.Mode)
	kv.add("dialect", res.Dialect)
	kv.add("nodes", fmt.Sprint(res.Nodes))
	return kv.render()
}

// millisCell shows milliseconds with one decimal, the unit of -o json.
func millisCell(ms float64) string { return fmt.Sprintf("%.1fms", ms) }

// benchProgress shows how far a run is on stderr, when stderr is a
// terminal, on one line it rewrites. It is also the writer of the nodes'
// log: a log line clears the progress line first, and the next report
// draws it again below.
type benchProgress struct {
	out io.Writer
	on  bool

	mu    sync.Mutex
	shown bool
}

func newBenchProgress(ios *IOStreams) *benchProgress {
	f, ok := ios.ErrOut.(*os.File)
	return &benchProgress{out: ios.ErrOut, on: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *benchProgress) show(pr bench.Progress) {
	if !p.on {
		return
	}
	var line string
	switch {
	case pr.Phase == bench.PhaseCleaningUp && pr.Removed > 0:
		line = fmt.Sprintf("removing the benchmark's jobs: %d of %d", pr.Removed, pr.Inserted)
	case pr.Phase == bench.PhaseCleaningUp:
		line = "removing the benchmark's jobs and nodes"
	case pr.Phase == bench.PhaseInserting && pr.Total > 0:
		line = fmt.Sprintf("inserting: %d of %d jobs", pr.Inserted, pr.Total)
	case pr.Phase == bench.PhaseInserting:
		line = fmt.Sprintf("inserting the first %d jobs", pr.Inserted)
	case pr.Total > 0:
		line = fmt.Sprintf("working: %d of %d jobs done, %.0f jobs/s, %s", pr.Done, pr.Total, pr.Rate,
			pr.Elapsed.Round(time.Second))
	default:
		line = fmt.Sprintf("working: %d jobs done of %d inserted, %.0f jobs/s, %s", pr.Done, pr.Inserted, pr.Rate,
			pr.Elapsed.Round(time.Second))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shown = true
	fmt.Fprintf(p.out, "\r\x1b[K%s", line)
}

// Write passes a log line through, clearing the progress line first.
func (p *benchProgress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.out, "\r\x1b[K")
		p.shown = false
	}
	return p.out.Write(b)
}

func (p *benchProgress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.out, "\r\x1b[K")
		p.shown = false
	}
}

package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
	"github.com/jobctl/jobctl/engine/simulate"
)

// timelineWidth is how many columns --timeline draws per node.
const timelineWidth = 72

// SimulateOptions are the parsed flags of `jobctl simulate`.
type SimulateOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	NodesFile   string
	FromCluster bool
	JobsFile    string
	Generate    string
	Selectors   []string
	Seed        uint64
	Interval    time.Duration
	Timeline    bool
	SVGFile     string
	Output      outputOptions
}

// NewCmdSimulate builds `jobctl simulate`. runF replaces the action in tests.
func NewCmdSimulate(f *Factory, runF func(context.Context, *SimulateOptions) error) *cobra.Command {
	opts := &SimulateOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate job placement on a virtual cluster",
		Long: `Run a workload on a virtual cluster with the engine's own dispatcher,
selectors and node acceptance, on an in-memory store with a virtual clock,
and report how each selector places it. Nothing touches a real cluster.

The nodes come from --nodes FILE, a YAML or JSON list of nodes: name,
max_load, max_jobs (default 200), weight (default 100), services (job types,
default noop and sleep), started_ago (a duration; the weight ramps up over
warmup, default 10m, after a start), accept_exceeding (default true), and
the health the node reports: load_avg, cpu (cores), memory (free bytes,
e.g. 16GiB), max_load_avg (default twice cpu), reserved_memory.
--from-cluster takes the ONLINE nodes of the configured database instead,
with the jobs they run now staying where they are, and its queued jobs as
the workload unless --jobs or --generate is given; a sleep job runs for its
payload's duration (a running one for the rest of it), a noop ends at once,
and any other runs for the median wall time of the latest measured runs of
its type (see 'jobctl stats'), the rest of it when it runs now; a job of a
type never measured never ends.

The jobs come from --jobs FILE, a YAML or JSON list of jobs: id (default
the place in the list), type (default sleep), load (default as submit
gives it), priority (1 to 100, default 50), duration (0 or absent: never
ends), submit_at (a duration after the start), parent and key; or from
--generate.

` + simulate.GenerateHelp + `

A round runs every --interval, and right after a round that placed work the
next runs at once, as on a node; stretches in which nothing can change are
skipped. For each selector the table shows the jobs placed and never placed,
the makespan (when the last job ended), the mean, 95th and 99th percentile
wait from submission to start, the mean utilisation of the cluster's max
load, the highest load factor any node reached, and the offers nodes
declined; -o wide adds the rounds run and why the jobs never placed wait.
Piped, the table is tab-separated under its header row (--no-headers drops
it).

--timeline draws each node's load over time below the table; --svg FILE
writes the same as a chart: a title, a legend, then a panel per selector
with a lane per node filled to its load as a share of its max load, a load
scale beside each lane, and a time axis shared by every panel. --jq EXPR
filters the -o json output below.

-o json prints {"results":[{"selector", "placements":[{"job", "node",
"start_s", "end_s"}], "summary":{"placed", "never_placed", "makespan_s",
"mean_wait_s", "p95_wait_s", "p99_wait_s", "mean_utilisation",
"max_load_factor", "declines"}}]}, the placements in dispatch order, end_s
null for a job that never ends. The same --seed gives the same output.`,
		Example: `  # compare the four selectors on a generated workload
  jobctl simulate --nodes nodes.yaml --selector loadfactor,random,roundrobin,lowerweight \
    --generate count=1000,rate=50/s,load=1..4,duration=10s..2m,types=a:3,b:1

  # replay a workload and watch each node's load over time
  jobctl simulate --nodes nodes.yaml --jobs jobs.yaml --timeline

  # how would the live cluster place what is queued now?
  jobctl simulate --from-cluster --selector loadfactor,roundrobin

  # every placement, for a script, and a chart
  jobctl simulate --nodes nodes.yaml --jobs jobs.json -o json --svg loads.svg`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSimulate(cmd, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return simulateRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.NodesFile, "nodes", "", "YAML or JSON file listing the simulated nodes")
	fl.BoolVar(&opts.FromCluster, "from-cluster", false, "simulate the live nodes (and queued jobs) of the database")
	fl.StringVar(&opts.JobsFile, "jobs", "", "YAML or JSON file listing the jobs")
	fl.StringVar(&opts.Generate, "generate", "", "generate a workload, e.g. count=1000,rate=50/s,load=1..4,duration=10s..2m")
	fl.StringSliceVar(&opts.Selectors, "selector", []string{placement.SelectorLoadFactor},
		"selectors to compare on the same input: "+strings.Join(placement.SelectorNames, ", "))
	fl.Uint64Var(&opts.Seed, "seed", 1, "seed of the generated workload and the random selector")
	fl.DurationVar(&opts.Interval, "interval", simulate.DefaultInterval, "dispatch interval, as serve's --dispatch-interval")
	fl.BoolVar(&opts.Timeline, "timeline", false, "draw each node's load over time")
	fl.StringVar(&opts.SVGFile, "svg", "", "write the node load chart to this SVG file")
	addOutputFlags(cmd, &opts.Output, false)
	addHeaderFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("selector", cobra.FixedCompletions(placement.SelectorNames, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// checkSimulate refuses flag combinations that cannot be run.
func checkSimulate(cmd *cobra.Command, opts *SimulateOptions) error {
	switch {
	case opts.NodesFile == "" && !opts.FromCluster:
		return usageErrorf(cmd, "give the nodes with --nodes FILE or --from-cluster")
	case opts.NodesFile != "" && opts.FromCluster:
		return usageErrorf(cmd, "--nodes and --from-cluster cannot be combined; choose one")
	case opts.JobsFile != "" && opts.Generate != "":
		return usageErrorf(cmd, "--jobs and --generate cannot be combined; choose one")
	case opts.JobsFile == "" && opts.Generate == "" && !opts.FromCluster:
		return usageErrorf(cmd, "give the workload with --jobs FILE or --generate SPEC")
	case opts.Interval <= 0:
		return usageErrorf(cmd, "invalid --interval %s: must be positive", opts.Interval)
	case opts.Timeline && opts.Output.Format == formatJSON:
		return usageErrorf(cmd, "--timeline draws for a person and -o json prints for a script; choose one")
	case len(opts.Selectors) == 0:
		return usageErrorf(cmd, "--selector needs at least one of %s", strings.Join(placement.SelectorNames, ", "))
	}
	for i, name := range opts.Selectors {
		sel, err := placement.ParseSelector(name)
		if err != nil {
			return usageErrorf(cmd, "--selector: %v", err)
		}
		opts.Selectors[i] = sel.Name()
	}
	return nil
}

// simulateInput is what the runs share.
type simulateInput struct {
	nodes []simulate.NodeSpec
	jobs  []simulate.JobSpec
}

func simulateRun(ctx context.Context, opts *SimulateOptions) error {
	tuneGCForSimulating()
	in, err := readSimulateInput(ctx, opts)
	if err != nil {
		return err
	}
	progress := newSimProgress(opts.IO)
	results := make([]*simulate.Result, 0, len(opts.Selectors))
	for _, sel := range opts.Selectors {
		res, err := simulate.Run(ctx, simulate.Config{
			Nodes: in.nodes, Jobs: in.jobs, Selector: sel, Seed: opts.Seed, Interval: opts.Interval,
			Timeline: opts.Timeline || opts.SVGFile != "", Progress: progress.show,
		})
		progress.clear()
		if err != nil {
			var bad *simulate.InputError
			if errors.As(err, &bad) {
				return &UsageError{Err: err, Command: "jobctl simulate"}
			}
			return err
		}
		results = append(results, res)
	}
	if opts.SVGFile != "" {
		if err := writeSimulateSVG(opts.SVGFile, results); err != nil {
			return err
		}
	}
	if opts.Output.Format == formatJSON {
		return writeSimulateJSON(opts.IO, results)
	}
	return printSimulateTable(opts, results)
}

// readSimulateInput reads the nodes and the workload; anything wrong with
// them is a usage error.
func readSimulateInput(ctx context.Context, opts *SimulateOptions) (*simulateInput, error) {
	usage := func(err error) error { return &UsageError{Err: err, Command: "jobctl simulate"} }
	in := &simulateInput{}
	if opts.FromCluster {
		store, err := opts.Store(ctx)
		if err != nil {
			return nil, err
		}
		if in.nodes, in.jobs, err = simulate.FromCluster(ctx, store); err != nil {
			return nil, err
		}
		if len(in.nodes) == 0 {
			return nil, usage(errors.New("the cluster has no ONLINE node to simulate; use --nodes FILE"))
		}
		if err := simulate.CheckNodes(in.nodes); err != nil {
			return nil, usage(fmt.Errorf("cluster nodes: %w", err))
		}
	} else {
		nodes, err := readSimFile(opts.NodesFile, "--nodes", simulate.ReadNodes)
		if err != nil {
			return nil, usage(err)
		}
		in.nodes = nodes
	}
	switch {
	case opts.JobsFile != "":
		jobs, err := readSimFile(opts.JobsFile, "--jobs", simulate.ReadJobs)
		if err != nil {
			return nil, usage(err)
		}
		in.jobs = jobs
	case opts.Generate != "":
		g, err := simulate.ParseGenerator(opts.Generate)
		if err != nil {
			return nil, usage(fmt.Errorf("--generate: %w", err))
		}
		in.jobs = g.Jobs(opts.Seed)
	case len(in.jobs) == 0:
		return nil, usage(errors.New("the cluster has no queued jobs; give a workload with --jobs FILE or --generate SPEC"))
	}
	return in, nil
}

// readSimFile opens one input file and parses it with read.
func readSimFile[T any](path, flag string, read func(r io.Reader, source string) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	return read(bufio.NewReader(f), path)
}

// writeSimulateJSON prints the results compactly: a big run has a million
// placements, and indenting them would only multiply the output. With
// --jq the results go through its filter instead.
func writeSimulateJSON(ios *IOStreams, results []*simulate.Result) error {
	for _, r := range results {
		if r.Placements == nil {
			r.Placements = []simulate.Placement{}
		}
	}
	out := struct {
		Results []*simulate.Result `json:"results"`
	}{results}
	if _, jq := ios.Out.(*jqWriter); jq {
		return writeJSON(ios.Out, out)
	}
	w := bufio.NewWriterSize(ios.Out, 1<<16)
	if err := json.NewEncoder(w).Encode(out); err != nil {
		return err
	}
	return w.Flush()
}

func printSimulateTable(opts *SimulateOptions, results []*simulate.Result) error {
	header := []string{"SELECTOR", "PLACED", "NEVER PLACED", "MAKESPAN", "MEAN WAIT", "P95 WAIT", "P99 WAIT",
		"UTILISATION", "MAX LOAD FACTOR", "DECLINES"}
	if opts.Output.wide() {
		header = append(header, "ROUNDS", "LEFT WAITING")
	}
	t := newReportTable(opts.IO, header...)
	for _, r := range results {
		s := r.Summary
		row := []string{r.Selector, fmt.Sprint(s.Placed), fmt.Sprint(s.NeverPlaced), secondsCell(s.MakespanS),
			secondsCell(s.MeanWaitS), secondsCell(s.P95WaitS), secondsCell(s.P99WaitS),
			fmt.Sprintf("%.1f%%", 100*s.MeanUtilisation), fmt.Sprintf("%.2f", s.MaxLoadFactor), fmt.Sprint(s.Declines)}
		if opts.Output.wide() {
			row = append(row, fmt.Sprint(r.Rounds), r.Left)
		}
		t.addRow(row...)
	}
	if err := t.render(); err != nil {
		return err
	}
	if !opts.Timeline {
		return nil
	}
	for _, r := range results {
		fmt.Fprintln(opts.IO.Out)
		if err := simulate.WriteTimeline(opts.IO.Out, r, timelineWidth); err != nil {
			return err
		}
	}
	return nil
}

// secondsCell shows seconds as seconds with three decimals, the unit of -o json.
func secondsCell(s float64) string { return fmt.Sprintf("%.3fs", s) }

func writeSimulateSVG(path string, results []*simulate.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	w := bufio.NewWriter(f)
	err = simulate.WriteSVG(w, results)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	return nil
}

// simProgress shows how far a long run is on stderr, when stderr is a
// terminal, on one line it rewrites.
type simProgress struct {
	ios   *IOStreams
	on    bool
	shown bool
}

func newSimProgress(ios *IOStreams) *simProgress {
	f, ok := ios.ErrOut.(*os.File)
	return &simProgress{ios: ios, on: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *simProgress) show(pr simulate.Progress) {
	if !p.on {
		return
	}
	p.shown = true
	fmt.Fprintf(p.ios.ErrOut, "\r\x1b[Ksimulating %s: %d of %d jobs placed, %d submitted, at %s",
		pr.Selector, pr.Done, pr.Total, pr.Submitted, pr.At.Round(time.Second))
}

func (p *simProgress) clear() {
	if p.shown {
		fmt.Fprint(p.ios.ErrOut, "\r\x1b[K")
		p.shown = false
	}
}

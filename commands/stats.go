package commands

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// StatsOptions are the parsed flags of `jobctl stats`.
type StatsOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	// Runs is how many of each type's latest measured runs the usage
	// figures cover.
	Runs   int
	Output outputOptions
}

// NewCmdStats builds `jobctl stats`. runF replaces the action in tests.
func NewCmdStats(f *Factory, runF func(context.Context, *StatsOptions) error) *cobra.Command {
	opts := &StatsOptions{IO: f.IO, Store: f.Store, Runs: engine.DefaultUsageRuns}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count jobs per state and type, and show node loads",
		Long: `Count the cluster's jobs per state and per type, and show each node's load
and running jobs: a summary for cron and monitoring, read with a few counting
queries whatever the number of jobs.

Types are counted for every type a registered node offers and the built-in
ones; jobs of any other type are counted together as other types.

Beside the counts, each type's declared load and what its latest --runs
measured runs really used (see 'jobctl help usage'): the cores they used
(CPU seconds per wall second), median and 95th percentile, and the 95th
percentile of their peak memory. A type whose declared load is far from
its use is flagged, as in "transcode: declared load 1, uses 3.2 cores p95
over 40 runs": far is a 95th percentile of cores above 1.5 times the
declared load, or below half of it, over at least 5 runs, and at least a
quarter core away from it. The declared load is the median of the loads
those runs were submitted with.

Piped, each line is a name, a tab and a value, the name being where -o json
has the value, with types and nodes by their names:
  jobs.total 7, jobs.by_status.QUEUED 3        (every state, zeros too)
  types.encode.total 1, types.encode.by_status.FAILED 1   (states with jobs)
  other_types.total 1, other_types.by_status.QUEUED 1
  usage.encode.declared_load 1, usage.encode.runs 40, usage.encode.cores_p50 2.9,
  usage.encode.cores_p95 3.2, usage.encode.memory_p95_bytes 110100480,
  usage.encode.wall_p50_seconds 10, usage.encode.oom_killed 0,
  usage.encode.verdict uses-more, usage.encode.note encode: declared load 1, …
      (types with measured runs; verdict ok, uses-more, uses-less or
      too-few-runs; the note only when the load is far off)
  nodes.n1.state ONLINE, nodes.n1.maintenance false, nodes.n1.load 1.5,
  nodes.n1.max_load 4, nodes.n1.running 1, nodes.n1.max_jobs 200,
  nodes.n1.dispatcher true

-o json prints {"jobs": {"total", "by_status"}, "types": [{"type", "total",
"by_status"}], "other_types": {"total", "by_status"}, "usage": [{"type",
"declared_load", "runs", "cores_p50", "cores_p95", "memory_p95_bytes",
"wall_p50_seconds", "oom_killed", "verdict", "note"}], "nodes": [{"name",
"state", "maintenance", "load", "max_load", "running", "max_jobs",
"dispatcher"}]}; by_status holds every state, zeros too.`,
		Example: `  # the cluster at a glance
  jobctl stats

  # alert when jobs pile up, from cron
  test "$(jobctl stats --jq '.jobs.by_status.QUEUED')" -lt 1000 || echo "queue is long"

  # failed jobs per type
  jobctl stats --jq '.types[] | "\(.type) \(.by_status.FAILED)"'

  # the running jobs of node n1, from a shell
  jobctl stats | awk -F '\t' '$1 == "nodes.n1.running" { print $2 }'

  # types whose declared load is far from what their last 200 runs used
  jobctl stats --runs 200 --jq '.usage[] | select(.note != "") | .note'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Runs < 1 {
				return usageErrorf(cmd, "invalid --runs %d: must be at least 1", opts.Runs)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Runs, "runs", opts.Runs, "how many of each type's latest measured runs the usage figures cover")
	addOutputFlags(cmd, &opts.Output, false)
	addHeaderFlags(cmd)
	return cmd
}

// jobCounts are jobs counted per status: every status is a key.
type jobCounts struct {
	Total    int                   `json:"total"`
	ByStatus map[engine.Status]int `json:"by_status"`
}

func newJobCounts(by map[engine.Status]int) jobCounts {
	c := jobCounts{ByStatus: make(map[engine.Status]int, len(engine.AllStatuses))}
	for _, s := range engine.AllStatuses {
		c.ByStatus[s] = by[s]
		c.Total += by[s]
	}
	return c
}

type typeCounts struct {
	Type string `json:"type"`
	jobCounts
}

type nodeStats struct {
	Name        string           `json:"name"`
	State       engine.NodeState `json:"state"`
	Maintenance bool             `json:"maintenance"`
	Load        float64          `json:"load"`
	MaxLoad     float64          `json:"max_load"`
	Running     int              `json:"running"`
	MaxJobs     int              `json:"max_jobs"`
	Dispatcher  bool             `json:"dispatcher"`
}

// clusterStats is what `jobctl stats -o json` prints.
type clusterStats struct {
	Jobs       jobCounts          `json:"jobs"`
	Types      []typeCounts       `json:"types"`
	OtherTypes jobCounts          `json:"other_types"`
	Usage      []engine.TypeUsage `json:"usage"`
	Nodes      []nodeStats        `json:"nodes"`
}

// builtinTypes are counted even when no node is registered.
var builtinTypes = []string{engine.TypeExec, engine.TypeNoop, engine.TypeSleep, engine.TypeWorkflow}

func statsRun(ctx context.Context, opts *StatsOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	stats, err := collectStats(ctx, store, opts.Runs)
	if err != nil {
		return err
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, stats)
	}
	if !opts.IO.OutIsTerminal {
		return printStatsPiped(opts.IO, stats)
	}
	return printStatsTerminal(opts.IO, stats)
}

// collectStats counts with one query for all jobs and one per type, so
// its cost does not grow with the number of jobs listed, and reads the
// latest runs measured runs of each type that has jobs.
func collectStats(ctx context.Context, store statsReader, runs int) (*clusterStats, error) {
	all, err := store.JobCountByStatus(ctx, engine.JobListParams{})
	if err != nil {
		return nil, err
	}
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return nil, err
	}
	types := slices.Clone(builtinTypes)
	for _, n := range nodes {
		for _, s := range n.Services {
			types = append(types, s.Type)
		}
	}
	slices.Sort(types)
	types = slices.Compact(types)

	stats := &clusterStats{Jobs: newJobCounts(all), Types: []typeCounts{}, Nodes: []nodeStats{}}
	other := maps.Clone(all)
	if other == nil {
		other = map[engine.Status]int{}
	}
	for _, t := range types {
		by, err := store.JobCountByStatus(ctx, engine.JobListParams{Types: []string{t}})
		if err != nil {
			return nil, err
		}
		c := newJobCounts(by)
		if c.Total == 0 {
			continue
		}
		for s, n := range by {
			other[s] -= n
		}
		stats.Types = append(stats.Types, typeCounts{Type: t, jobCounts: c})
	}
	for s, n := range other {
		// Jobs that came or went between the queries must not show as
		// a negative count.
		other[s] = max(n, 0)
	}
	stats.OtherTypes = newJobCounts(other)
	if stats.Usage, err = typeUsage(ctx, store, stats.Types, runs); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		stats.Nodes = append(stats.Nodes, nodeStats{
			Name: n.Name, State: n.State, Maintenance: n.Maintenance, Load: n.Load, MaxLoad: n.MaxLoad,
			Running: n.Running, MaxJobs: n.MaxJobs, Dispatcher: n.Dispatcher,
		})
	}
	return stats, nil
}

// printStatsPiped prints one "name TAB value" line per figure, each name
// the path -o json has it at, with types and nodes by their names.
func printStatsPiped(ios *IOStreams, st *clusterStats) error {
	kv := &keyValues{ios: ios}
	counts := func(prefix string, c jobCounts, zeros bool) {
		kv.add(prefix+".total", strconv.Itoa(c.Total))
		for _, s := range engine.AllStatuses {
			if n := c.ByStatus[s]; n > 0 || zeros {
				kv.add(prefix+".by_status."+string(s), strconv.Itoa(n))
			}
		}
	}
	counts("jobs", st.Jobs, true)
	for _, tc := range st.Types {
		counts("types."+tc.Type, tc.jobCounts, false)
	}
	counts("other_types", st.OtherTypes, false)
	for _, u := range st.Usage {
		prefix := "usage." + u.Type + "."
		kv.add(prefix+"declared_load", formatFloat(u.DeclaredLoad))
		kv.add(prefix+"runs", strconv.Itoa(u.Runs))
		kv.add(prefix+"cores_p50", formatFloat(u.CoresP50))
		kv.add(prefix+"cores_p95", formatFloat(u.CoresP95))
		kv.add(prefix+"memory_p95_bytes", strconv.FormatInt(u.MemoryP95, 10))
		kv.add(prefix+"wall_p50_seconds", formatFloat(u.WallP50))
		kv.add(prefix+"oom_killed", strconv.Itoa(u.OOMKilled))
		kv.add(prefix+"verdict", string(u.Verdict))
		if u.Note != "" {
			kv.add(prefix+"note", u.Note)
		}
	}
	for _, n := range st.Nodes {
		prefix := "nodes." + n.Name + "."
		kv.add(prefix+"state", string(n.State))
		kv.add(prefix+"maintenance", strconv.FormatBool(n.Maintenance))
		kv.add(prefix+"load", formatFloat(n.Load))
		kv.add(prefix+"max_load", formatFloat(n.MaxLoad))
		kv.add(prefix+"running", strconv.Itoa(n.Running))
		kv.add(prefix+"max_jobs", strconv.Itoa(n.MaxJobs))
		kv.add(prefix+"dispatcher", strconv.FormatBool(n.Dispatcher))
	}
	return kv.render()
}

// printStatsTerminal prints three tables for a person: jobs per state, a
// type by state matrix over the states that have jobs, and the nodes.
func printStatsTerminal(ios *IOStreams, st *clusterStats) error {
	p := newPalette(ios)
	var present []engine.Status
	for _, s := range engine.AllStatuses {
		if st.Jobs.ByStatus[s] > 0 {
			present = append(present, s)
		}
	}
	w := ios.Out
	if len(present) == 0 {
		if _, err := w.Write([]byte("No jobs.\n")); err != nil {
			return err
		}
	} else {
		jobs := newTable(ios, "STATUS", "JOBS")
		for _, s := range present {
			jobs.addRow(statusCell(p, s), strconv.Itoa(st.Jobs.ByStatus[s]))
		}
		jobs.addRow(p.bold("TOTAL"), strconv.Itoa(st.Jobs.Total))
		if err := jobs.render(); err != nil {
			return err
		}
		header := []string{"TYPE", "TOTAL"}
		for _, s := range present {
			header = append(header, string(s))
		}
		types := newTable(ios, header...)
		rows := st.Types
		if st.OtherTypes.Total > 0 {
			rows = append(slices.Clone(rows), typeCounts{Type: "(other types)", jobCounts: st.OtherTypes})
		}
		for _, tc := range rows {
			row := []string{tc.Type, strconv.Itoa(tc.Total)}
			for _, s := range present {
				row = append(row, strconv.Itoa(tc.ByStatus[s]))
			}
			types.addRow(row...)
		}
		if _, err := w.Write([]byte("\n")); err != nil {
			return err
		}
		if err := types.render(); err != nil {
			return err
		}
	}
	if _, err := w.Write([]byte("\n")); err != nil {
		return err
	}
	if len(st.Usage) > 0 {
		if err := printUsageTable(ios, p, st.Usage); err != nil {
			return err
		}
		if _, err := w.Write([]byte("\n")); err != nil {
			return err
		}
	}
	if len(st.Nodes) == 0 {
		_, err := w.Write([]byte("No nodes registered; start one with 'jobctl serve'.\n"))
		return err
	}
	nodes := newTable(ios, "NODE", "STATE", "LOAD", "RUNNING", "DISPATCHER")
	for _, n := range st.Nodes {
		dispatcher := ""
		if n.Dispatcher {
			dispatcher = "yes"
		}
		nodes.addRow(n.Name, nodeStateCell(p, n.State),
			formatFloat(n.Load)+"/"+formatFloat(n.MaxLoad),
			strconv.Itoa(n.Running)+"/"+strconv.Itoa(n.MaxJobs), dispatcher)
	}
	return nodes.render()
}

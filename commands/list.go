package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// defaultListLimit keeps a plain `jobctl list` on one screenful or two of a
// busy cluster; --limit 0 lifts it.
const defaultListLimit = 100

// defaultWatchInterval is how often `list -w` polls.
const defaultWatchInterval = time.Second

// ListOptions are the parsed flags of `jobctl list`.
type ListOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Filter   engine.JobListParams
	Watch    bool
	Interval time.Duration // how often -w polls
	Output   outputOptions
}

// NewCmdList builds `jobctl list`. runF replaces the action in tests.
func NewCmdList(f *Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Interval: defaultWatchInterval}
	var states []string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List jobs",
		Long: `List jobs, oldest first, up to --limit of the newest. When more jobs match,
a note on stderr says so; --limit 0 lists them all.

Without --state, deleted jobs are left out; --state all shows them too.
States: INSTANTIATED, QUEUED, RESTART, DISPATCHING, RUNNING, PAUSED, WAITING,
CANCELLING, FINISHED, WARNING, FAILED, CANCELLED, DELETED (any case).

With -w the listing stays open and prints each job again when it changes,
until interrupted; -o json then prints one JSON object per line.`,
		Example: `  # what is waiting and running
  jobctl list --state queued,restart --state running

  # failed jobs of one type, with every column
  jobctl list --state failed --type encode -o wide

  # the children of job 12, as JSON
  jobctl list --parent 12 -o json

  # ids of every held job, to release them
  jobctl list --state instantiated -q | xargs jobctl release

  # follow changes on one node
  jobctl list --node worker-3 -w`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := parseStates(states)
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			opts.Filter.Statuses = st
			if opts.Filter.Limit < 0 {
				return usageErrorf(cmd, "invalid --limit %d: must not be negative", opts.Filter.Limit)
			}
			if cmd.Flags().Changed("parent") {
				parent, _ := cmd.Flags().GetInt64("parent")
				opts.Filter.ParentID = &parent
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&states, "state", nil, "only jobs in these states (comma-separated, repeatable; \"all\" includes deleted)")
	fl.StringSliceVar(&opts.Filter.Types, "type", nil, "only jobs of these types (comma-separated, repeatable)")
	fl.StringVar(&opts.Filter.Node, "node", "", "only jobs on this node")
	fl.StringVar(&opts.Filter.Key, "key", "", "only jobs with this key")
	fl.Int64("parent", 0, "only children of this job")
	fl.IntVar(&opts.Filter.Limit, "limit", defaultListLimit, "show at most this many of the newest jobs (0: all)")
	fl.BoolVarP(&opts.Watch, "watch", "w", false, "keep printing jobs as they change, until interrupted")
	addOutputFlags(cmd, &opts.Output, true)
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodeNames(f))
	_ = cmd.RegisterFlagCompletionFunc("state", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names := []string{"all"}
		for _, s := range engine.AllStatuses {
			names = append(names, strings.ToLower(string(s)))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// parseStates reads --state values. No value means every state but
// DELETED, so deleted jobs stay out of sight unless asked for.
func parseStates(values []string) ([]engine.Status, error) {
	if len(values) == 0 {
		var st []engine.Status
		for _, s := range engine.AllStatuses {
			if s != engine.StatusDeleted {
				st = append(st, s)
			}
		}
		return st, nil
	}
	var st []engine.Status
	for _, v := range values {
		if strings.EqualFold(strings.TrimSpace(v), "all") {
			return nil, nil
		}
		s, err := engine.ParseStatus(v)
		if err != nil {
			return nil, err
		}
		st = append(st, s)
	}
	return st, nil
}

func listRun(ctx context.Context, opts *ListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	if opts.Watch {
		jobs, err := store.JobList(ctx, opts.Filter)
		if err != nil {
			return err
		}
		return watchJobs(ctx, opts, store, jobs)
	}
	// One job more than asked for tells whether the limit cut the listing
	// short, without a second query that could disagree with the first.
	filter := opts.Filter
	if filter.Limit > 0 {
		filter.Limit++
	}
	jobs, err := store.JobList(ctx, filter)
	if err != nil {
		return err
	}
	truncated := opts.Filter.Limit > 0 && len(jobs) > opts.Filter.Limit
	if truncated {
		jobs = jobs[1:] // the oldest: the listing holds the newest
	}
	if err := printJobs(opts.IO, opts.Output, opts.Clock.Now(), jobs, true); err != nil {
		return err
	}
	if truncated {
		// On stderr, so a script reading stdout gets the rows alone, yet
		// nobody takes the listing for every matching job.
		fmt.Fprintf(opts.IO.ErrOut, "jobctl: showing the newest %d matching jobs; more match, --limit 0 lists all\n", len(jobs))
	}
	return nil
}

// watchJobs prints the first listing, then every job again whenever its
// version changes, until ctx ends (the operator interrupts).
func watchJobs(ctx context.Context, opts *ListOptions, store engine.Store, jobs []*engine.Job) error {
	seen := map[int64]int64{}
	first := true
	for {
		var changed []*engine.Job
		for _, j := range jobs {
			if v, ok := seen[j.ID]; !ok || v != j.Version {
				changed = append(changed, j)
				seen[j.ID] = j.Version
			}
		}
		if first || len(changed) > 0 {
			if err := printWatched(opts, changed, first); err != nil {
				return err
			}
		}
		first = false
		if sleepCtx(ctx, opts.Interval) != nil {
			return nil
		}
		var err error
		if jobs, err = store.JobList(ctx, opts.Filter); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// printWatched prints one batch of changes: table rows under the header of
// the first batch, or one JSON object per line.
func printWatched(opts *ListOptions, jobs []*engine.Job, first bool) error {
	if opts.Output.Format != formatJSON || opts.Output.Quiet {
		return printJobs(opts.IO, opts.Output, opts.Clock.Now(), jobs, first)
	}
	enc := json.NewEncoder(opts.IO.Out)
	for _, j := range jobs {
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

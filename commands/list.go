package commands

import (
	"context"
	"fmt"
	"strconv"
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

	Filter   engine.JobListParams // --since and --until are its CreatedAfter and CreatedBefore, --sort its Sort
	Watch    bool
	Tree     bool          // families: children indented below their parents
	Interval time.Duration // how often -w polls
	Output   outputOptions
}

// NewCmdList builds `jobctl list`. runF replaces the action in tests.
func NewCmdList(f *Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Interval: defaultWatchInterval}
	var states []string
	var sinceText, untilText, sortText, priorityText string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List jobs",
		Long: `List jobs, oldest first, up to --limit of the newest. When more jobs match,
a note on stderr says how many and that --limit 0 lists them all.

--sort orders every matching job, in the database, before --limit applies:
--sort -load --limit 3 lists the three heaviest jobs of all. It takes id,
created, status, type, operation, node, load, progress, key, run-after,
started or finished; a leading - sorts descending. Rows equal in the field
go by id, in the same direction; text compares byte by byte, and a time not
set (a job not started yet) comes first ascending, last descending.

--since and --until keep the jobs created in a window. Each takes RFC 3339
(2030-01-02T15:04:05Z), a date or a date and time in the local zone
(2030-01-02, "2030-01-02 15:04"), a clock time (15:04: the last one) or a
duration ago (90m, 2d, 1d12h).

Times are shown as ages (and RUN AFTER as "in 5m") on a terminal and as
RFC 3339 in UTC when piped and in JSON. On a terminal the table gains a RUN
AFTER column when a listed job waits for its start time. -o wide adds KEY,
PARENT, ATTEMPT, STARTED, FINISHED, EXIT (the exit code), RUN AFTER,
MESSAGE and COMMAND (the job's arguments, an exec job's command, each
argument's bounds visible; cut to 40 columns on a terminal, whole when
piped, where it is the last column).

The header row shows on a terminal and not when piped; --headers and
--no-headers decide otherwise.

Without --state, deleted jobs are left out; --state all shows them too.
States: INSTANTIATED, QUEUED, RESTART, RUNNING, PAUSED, WAITING, CANCELLING,
FINISHED, WARNING, FAILED, CANCELLED, DELETED (any case).

--oom keeps the jobs whose last ended run was killed at its memory limit
(submit --memory, on a node with serve --enforce): their message says
"killed: out of memory, limit 2GiB". -o wide adds what each job's last
ended run used, as its node measured it: CPU (seconds of user and system
time), PEAK (memory) and WALL (its running time); -o json has it as usage.

--double-fault keeps the double faults: jobs that failed finally and whose
rollback job (submit --rollback) failed as well.

With -w the listing stays open and prints each job again when it changes,
until interrupted; -o json then prints one JSON object per line.

` + listTreeHelp,
		Example: `  # failed jobs whose rollback failed too
  jobctl list --double-fault

  # what is waiting and running
  jobctl list --state queued,restart --state running

  # failed jobs of one type, with every column
  jobctl list --state failed --type encode -o wide

  # the children of job 12, as JSON
  jobctl list --parent 12 -o json

  # ids of every held job, to release them (nothing to do is no error)
  jobctl list --state instantiated -q | jobctl release -

  # what failed in the last hour, heaviest first
  jobctl list --state failed --since 1h --sort -load

  # the three heaviest jobs of all
  jobctl list --sort -load --limit 3

  # the id and node of each running job, through jq
  jobctl list --state running --jq '.[] | "\(.id) \(.node)"'

  # follow changes on one node
  jobctl list --node worker-3 -w

  # jobs killed at their memory limit in the last day, with what they used
  jobctl list --oom --since 1d -o wide

  # the families of the last hour, each child below its parent
  jobctl list --since 1h --tree`,
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
			for _, w := range []struct {
				name, text string
				into       **time.Time
			}{{"since", sinceText, &opts.Filter.CreatedAfter}, {"until", untilText, &opts.Filter.CreatedBefore}} {
				if !cmd.Flags().Changed(w.name) {
					continue
				}
				t, err := parseTimeSpec(w.text, opts.Clock.Now(), opts.IO.Zone(), towardPast)
				if err != nil {
					return usageErrorf(cmd, "invalid --%s %q: want %s", w.name, w.text, pastTimeForms)
				}
				*w.into = &t
			}
			if since, until := opts.Filter.CreatedAfter, opts.Filter.CreatedBefore; since != nil && until != nil && until.Before(*since) {
				return usageErrorf(cmd, "--until %s is before --since %s; nothing could match", untilText, sinceText)
			}
			if cmd.Flags().Changed("priority") {
				if opts.Filter.PriorityMin, opts.Filter.PriorityMax, err = parsePriorityRange(priorityText); err != nil {
					return usageErrorf(cmd, "invalid --priority %q: %v", priorityText, err)
				}
			}
			if cmd.Flags().Changed("sort") {
				if opts.Filter.Sort, err = parseJobSort(sortText); err != nil {
					return usageErrorf(cmd, "invalid --sort %q: %v", sortText, err)
				}
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if err := checkTree(cmd, opts); err != nil {
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
	fl.StringVar(&priorityText, "priority", "", "only jobs of this priority, or of a `RANGE` like 80..100 (either end may be left out)")
	fl.IntVar(&opts.Filter.Limit, "limit", defaultListLimit, "show at most this many jobs: the newest, or the first in --sort's order (0: all)")
	fl.StringVar(&sortText, "sort", "", "order the rows by `FIELD` (id, created, status, type, node, load, …; -FIELD descending)")
	fl.StringVar(&sinceText, "since", "", "only jobs created at or after this `TIME` (RFC 3339, date, HH:MM, or a duration ago like 2h)")
	fl.StringVar(&untilText, "until", "", "only jobs created at or before this `TIME` (as --since)")
	fl.BoolVar(&opts.Filter.DoubleFault, "double-fault", false, "only jobs whose rollback job failed too")
	fl.BoolVar(&opts.Filter.OOMKilled, "oom", false, "only jobs whose last run was killed at its memory limit (submit --memory)")
	fl.BoolVarP(&opts.Watch, "watch", "w", false, "keep printing jobs as they change, until interrupted")
	addTreeFlag(cmd, opts)
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("sort", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, n := range jobSortNames() {
			names = append(names, n, "-"+n)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodes(f))
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes(f))
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
	jobs, matched, err := listPage(ctx, opts, store)
	if err != nil {
		return err
	}
	if err := engine.MarkDoubleFaults(ctx, store, jobs); err != nil {
		return err
	}
	// On stderr, so a script reading stdout gets the rows alone, yet
	// nobody takes the listing for every matching job.
	which := "the newest"
	if opts.Filter.Sort.Field != "" {
		which = "the first"
	}
	note := func() {
		switch {
		case matched > listCountCap:
			fmt.Fprintf(opts.IO.ErrOut, "jobctl: showing %s %s of more than %s matching jobs; --limit 0 lists all\n",
				which, groupDigits(len(jobs)), groupDigits(listCountCap))
		case matched > len(jobs):
			fmt.Fprintf(opts.IO.ErrOut, "jobctl: showing %s %s of %s matching jobs; --limit 0 lists all\n",
				which, groupDigits(len(jobs)), groupDigits(matched))
		}
	}
	if opts.Watch {
		return watchJobs(ctx, opts, store, jobs, note)
	}
	if opts.Tree {
		err = printTree(opts, jobs)
	} else {
		err = printJobs(opts.IO, opts.Output, opts.Clock.Now(), jobs, true)
	}
	if err != nil {
		return err
	}
	note()
	return nil
}

// listCountCap is how many matching jobs a listing cut short counts at
// most: counting every job of a table with a million ended ones took ten
// times as long as reading the page, for a figure that past this size
// tells nobody more than "many".
const listCountCap = 10000

// listPage reads the first Limit matching jobs (the newest, unsorted; the
// first in --sort's order, sorted) and how many match in all, up to
// listCountCap (more than it: listCountCap+1). One job more than asked for
// tells whether the limit cut the listing short; only then are the
// matching jobs counted, brief and unsorted.
func listPage(ctx context.Context, opts *ListOptions, store jobReader) ([]*engine.Job, int, error) {
	filter := opts.Filter
	if filter.Limit > 0 {
		filter.Limit++
	}
	jobs, err := store.JobList(ctx, filter)
	if err != nil {
		return nil, 0, err
	}
	if opts.Filter.Limit == 0 || len(jobs) <= opts.Filter.Limit {
		return jobs, len(jobs), nil
	}
	if opts.Filter.Sort.Field != "" {
		jobs = jobs[:opts.Filter.Limit] // the one past the limit in the sort's order
	} else {
		jobs = jobs[1:] // the oldest: the listing holds the newest
	}
	count := opts.Filter
	count.Limit, count.Brief, count.Sort = listCountCap+1, true, engine.JobSort{}
	counted, err := store.JobList(ctx, count)
	if err != nil {
		return nil, 0, err
	}
	matched := len(counted)
	// Jobs submitted between the two reads may be counted; never report
	// fewer than were found.
	return jobs, max(matched, len(jobs)+1), nil
}

// listJobs reads what a watching listing shows: the newest Limit
// matching jobs, the creation window included.
func listJobs(ctx context.Context, opts *ListOptions, store jobReader) ([]*engine.Job, error) {
	jobs, err := store.JobList(ctx, opts.Filter)
	if err == nil && opts.Output.Format == formatJSON {
		err = engine.MarkDoubleFaults(ctx, store, jobs)
	}
	return jobs, err
}

// groupDigits writes a count with thousands separators: 2,345.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// watchJobs prints the first listing and calls afterFirst, then prints
// every job again whenever its version changes, until ctx ends (the
// operator interrupts).
func watchJobs(ctx context.Context, opts *ListOptions, store jobReader, jobs []*engine.Job, afterFirst func()) error {
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
		if first {
			afterFirst()
		}
		first = false
		if sleepCtx(ctx, opts.Interval) != nil {
			return nil
		}
		var err error
		if jobs, err = listJobs(ctx, opts, store); err != nil {
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
	for _, j := range jobs {
		if err := writeJSONLine(opts.IO.Out, j); err != nil {
			return err
		}
	}
	return nil
}

// parseJobSort reads --sort: a field of engine.JobSortFields, - in front
// for descending; run_after and age are accepted as the names a reader
// may try first.
func parseJobSort(s string) (engine.JobSort, error) {
	var js engine.JobSort
	name := strings.ToLower(strings.TrimSpace(s))
	if rest, ok := strings.CutPrefix(name, "-"); ok {
		js.Desc, name = true, rest
	}
	switch name {
	case "run_after", "runafter":
		name = "run-after"
	case "age":
		// The oldest job has the greatest age.
		name, js.Desc = "created", !js.Desc
	}
	if _, err := engine.JobSortFieldNamed(name); err != nil {
		return js, fmt.Errorf("want one of %s, with - in front for descending", strings.Join(jobSortNames(), ", "))
	}
	js.Field = name
	return js, nil
}

// jobSortNames are the fields --sort knows, in the order help lists them.
func jobSortNames() []string {
	names := make([]string, len(engine.JobSortFields))
	for i, f := range engine.JobSortFields {
		names[i] = f.Name
	}
	return names
}

// parsePriorityRange reads --priority: one priority, or a range MIN..MAX
// in which either end may be left out.
func parsePriorityRange(s string) (lo, hi int, err error) {
	one := func(t string) (int, error) {
		p, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || p < engine.MinPriority || p > engine.MaxPriority {
			return 0, fmt.Errorf("want whole numbers from %d to %d, or a range like 80..100", engine.MinPriority, engine.MaxPriority)
		}
		return p, nil
	}
	from, to, isRange := strings.Cut(s, "..")
	if !isRange {
		p, err := one(s)
		return p, p, err
	}
	if strings.TrimSpace(from) != "" {
		if lo, err = one(from); err != nil {
			return 0, 0, err
		}
	}
	if strings.TrimSpace(to) != "" {
		if hi, err = one(to); err != nil {
			return 0, 0, err
		}
	}
	if lo != 0 && hi != 0 && hi < lo {
		return 0, 0, fmt.Errorf("the range ends below its start")
	}
	return lo, hi, nil
}

package commands

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// NewCmdLimits builds `jobctl limits` and its subcommands; on its own it
// lists the limits.
func NewCmdLimits(f *Factory) *cobra.Command {
	list := NewCmdLimitsList(f, nil)
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Cap how many jobs of a type run at once, cluster-wide",
		Long: `Cap how many jobs of one type run at once across the whole cluster, whatever
room the nodes have: a database that takes a few writers, a licence for a
few seats, an API with a rate limit.

The dispatcher reads the limits, and how many jobs of each limited type
run, from the database at the start of every round, so a limit holds from
the next round on and across a change of dispatcher. A job counts as
running from the moment it is handed to a node until it ends, including
while it is paused on its node; a parent waiting for its children does
not count. Jobs held back stay queued, in their order, and
'jobctl explain ID' names the limit that holds one back. Lowering a limit
below what runs now stops nothing: no more start until fewer run.

With no subcommand it lists the limits, as 'jobctl limits ls'.`,
		Example: `  # at most 2 render jobs at once, on all nodes together
  jobctl limits set render --max-running 2

  # the limits and how many jobs of each type run now
  jobctl limits

  # lift the limit
  jobctl limits rm render`,
		Args: subcommandArgs,
		RunE: list.RunE,
	}
	// The bare group command lists, so it takes the list's flags too.
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(list, NewCmdLimitsSet(f, nil), NewCmdLimitsRemove(f, nil))
	return cmd
}

// LimitsListOptions are the parsed flags of `jobctl limits ls`.
type LimitsListOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Output outputOptions
}

// NewCmdLimitsList builds `jobctl limits ls`. runF replaces the action in tests.
func NewCmdLimitsList(f *Factory, runF func(context.Context, *LimitsListOptions) error) *cobra.Command {
	opts := &LimitsListOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the type limits",
		Long: `List every type limit with how many jobs of the type run now, ordered by
type. A type that runs as many jobs as its limit allows, or more (after
the limit was lowered), starts no more until fewer run.

-o json prints an array of objects with the stable fields type,
max_running, running and updated_at. -q prints the limited types.`,
		Example: `  # the limits
  jobctl limits ls

  # the types at their limit now
  jobctl limits ls -o json | jq -r '.[] | select(.running >= .max_running) | .type'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return limitsListRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	cmd.Flags().Lookup("quiet").Usage = "print only the limited types, one per line"
	return cmd
}

func limitsListRun(ctx context.Context, opts *LimitsListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	limits, err := store.TypeLimitList(ctx)
	if err != nil {
		return err
	}
	ios := opts.IO
	switch {
	case opts.Output.Quiet:
		for _, l := range limits {
			fmt.Fprintln(ios.Out, l.Type)
		}
		return nil
	case opts.Output.Format == formatJSON:
		return writeJSON(ios.Out, limits)
	}
	if len(limits) == 0 && ios.OutIsTerminal {
		fmt.Fprintln(ios.ErrOut, "no type limits; set one with 'jobctl limits set TYPE --max-running N'")
		return nil
	}
	p := newPalette(ios)
	t := newTable(ios, "TYPE", "MAX RUNNING", "RUNNING")
	for _, l := range limits {
		running := strconv.Itoa(l.Running)
		if l.Running >= l.MaxRunning {
			running = p.yellow(running)
		}
		t.addRow(l.Type, strconv.Itoa(l.MaxRunning), running)
	}
	return t.render()
}

// LimitsSetOptions are the parsed flags of `jobctl limits set`.
type LimitsSetOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Type       string
	MaxRunning int
	Output     outputOptions
	Audit      auditOptions
}

// NewCmdLimitsSet builds `jobctl limits set`. runF replaces the action in tests.
func NewCmdLimitsSet(f *Factory, runF func(context.Context, *LimitsSetOptions) error) *cobra.Command {
	opts := &LimitsSetOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "set TYPE --max-running N",
		Short: "Set the limit of a job type",
		Long: fmt.Sprintf(`Let at most N jobs of TYPE run at once across the cluster (N from 1 to %d),
replacing the type's limit if it has one. It applies from the dispatcher's
next round; jobs that run already go on, even when more run than the new
limit allows.

Piped, it prints TYPE and N, tab-separated; -o json prints the limit as
'jobctl limits ls -o json' shows it.`, engine.MaxTypeLimit),
		Example: `  # at most 4 encode jobs at once
  jobctl limits set encode --max-running 4

  # one backup at a time, cluster-wide
  jobctl limits set backup --max-running 1`,
		Args:              exactArgs(1, "a job type"),
		ValidArgsFunction: completeArgTypes(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Type = args[0]
			if problem := engine.NameProblem("type", opts.Type, true); problem != "" {
				return usageErrorf(cmd, "invalid job type %q: %s", opts.Type, problem)
			}
			if !cmd.Flags().Changed("max-running") {
				return usageErrorf(cmd, "missing --max-running N: how many jobs of type %s may run at once", opts.Type)
			}
			if opts.MaxRunning < 1 || opts.MaxRunning > engine.MaxTypeLimit {
				return usageErrorf(cmd, "invalid --max-running %d: want 1 to %d (to stop a type for a while, pause or hold its jobs)",
					opts.MaxRunning, engine.MaxTypeLimit)
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return limitsSetRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.MaxRunning, "max-running", 0, "how many jobs of the type may run at once, across the cluster")
	_ = cmd.RegisterFlagCompletionFunc("max-running", cobra.NoFileCompletions)
	addOutputFlags(cmd, &opts.Output, false)
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

func limitsSetRun(ctx context.Context, opts *LimitsSetOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	before, err := engine.TypeLimitOf(ctx, store, opts.Type)
	if err != nil {
		return err
	}
	detail := fmt.Sprintf("max running %d", opts.MaxRunning)
	if before != nil {
		detail += fmt.Sprintf(" (was %d)", before.MaxRunning)
	}
	err = engine.Recorded(ctx, store, opts.Audit.actor(), engine.EventAppendParams{Verb: engine.EventLimitsSet, Type: opts.Type, Detail: detail},
		func(tx engine.TxStore, _ *engine.EventAppendParams) error {
			return tx.TypeLimitSet(ctx, engine.TypeLimitSetParams{Type: opts.Type, MaxRunning: opts.MaxRunning})
		})
	if err != nil {
		return err
	}
	after, err := engine.TypeLimitOf(ctx, store, opts.Type)
	if err != nil {
		return err
	}
	if after == nil { // removed by someone else meanwhile
		return fmt.Errorf("the limit of type %s was removed while it was being set", opts.Type)
	}
	ios := opts.IO
	switch {
	case opts.Output.Format == formatJSON:
		return writeJSON(ios.Out, after)
	case !ios.OutIsTerminal:
		fmt.Fprintf(ios.Out, "%s\t%d\n", plainCell(after.Type), after.MaxRunning)
	case before == nil:
		fmt.Fprintf(ios.Out, "type %s: at most %d running at once (no limit before)\n", after.Type, after.MaxRunning)
	default:
		fmt.Fprintf(ios.Out, "type %s: at most %d running at once (was %d)\n", after.Type, after.MaxRunning, before.MaxRunning)
	}
	if after.Running > after.MaxRunning {
		fmt.Fprintf(ios.ErrOut, "%d jobs of type %s run now; they go on, and no more start until fewer than %d run\n",
			after.Running, after.Type, after.MaxRunning)
	}
	return nil
}

// LimitsRemoveOptions are the parsed flags of `jobctl limits rm`.
type LimitsRemoveOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Types []string
	Audit auditOptions
}

// NewCmdLimitsRemove builds `jobctl limits rm`. runF replaces the action in tests.
func NewCmdLimitsRemove(f *Factory, runF func(context.Context, *LimitsRemoveOptions) error) *cobra.Command {
	opts := &LimitsRemoveOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		ValidArgsFunction: completeLimitTypes(f),
		Use:               "rm TYPE...",
		Aliases:           []string{"remove"},
		Short:             "Remove type limits",
		Long: `Remove the limit of each TYPE: from the dispatcher's next round on, its jobs
start as the nodes' room allows. Piped, each type whose limit was removed
is printed.

Exit status: 0 when every limit was removed; 3 when a TYPE has none (the
others are removed all the same).`,
		Example: `  # lift the limit of render jobs
  jobctl limits rm render

  # remove every limit
  jobctl limits ls -q | xargs -r jobctl limits rm`,
		Args: minArgs(1, "a job type"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Types = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return limitsRemoveRun(cmd.Context(), opts)
		},
	}
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

func limitsRemoveRun(ctx context.Context, opts *LimitsRemoveOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, typ := range opts.Types {
		err := engine.Recorded(ctx, store, opts.Audit.actor(), engine.EventAppendParams{Verb: engine.EventLimitsRm, Type: typ},
			func(tx engine.TxStore, _ *engine.EventAppendParams) error { return tx.TypeLimitDelete(ctx, typ) })
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if opts.IO.OutIsTerminal {
			fmt.Fprintf(opts.IO.Out, "removed the limit of type %s\n", typ)
		} else {
			fmt.Fprintln(opts.IO.Out, plainCell(typ))
		}
	}
	return joinErrors(errs)
}

// completeLimitTypes offers the limited types.
func completeLimitTypes(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, store, err := completionStore(cmd, f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		limits, err := store.TypeLimitList(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		out := make([]cobra.Completion, len(limits))
		for i, l := range limits {
			out[i] = cobra.CompletionWithDesc(l.Type, fmt.Sprintf("at most %d running", l.MaxRunning))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

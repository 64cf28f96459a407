package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// PruneOptions are the parsed flags of `jobctl prune`.
type PruneOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	OlderThan time.Duration
	Statuses  []engine.Status // empty: every terminal status
	DryRun    bool
	Output    outputOptions
	Audit     auditOptions
}

// pruneResult is what `prune -o json` prints.
type pruneResult struct {
	Removed        int       `json:"removed"`
	EventsRemoved  int       `json:"events_removed"`
	OlderThan      string    `json:"older_than"`
	FinishedBefore time.Time `json:"finished_before"`
	DryRun         bool      `json:"dry_run"`
}

// NewCmdPrune builds `jobctl prune`. runF replaces the action in tests.
func NewCmdPrune(f *Factory, runF func(context.Context, *PruneOptions) error) *cobra.Command {
	opts := &PruneOptions{IO: f.IO, Store: f.Store, Audit: newAudit(f)}
	var states []string
	cmd := &cobra.Command{
		Use:   "prune --older-than D",
		Short: "Delete jobs that ended long ago, with their logs and events",
		Long: `Delete the jobs that ended (FINISHED, WARNING, FAILED, CANCELLED or DELETED)
longer ago than --older-than, together with their logs and their events
('jobctl events'). Jobs that have not ended are never touched, whatever
their age. Age is measured from the moment a job ended, on the database's
clock. Without --state, the events naming no job (of nodes, limits,
schedules, the lease and earlier prunes) recorded before the same cutoff
are deleted too. The prune itself is recorded as an event.

A parent job is deleted only with or after its children: one that still has
a child that has not ended, or that is too young or of another state, stays.

The jobs are deleted in batches of ` + fmt.Sprint(engine.DefaultPruneBatch) + `, oldest end first, each its own
transaction, so the database is never locked for long and dispatch goes on
meanwhile. Each batch finds its jobs in an index of ended jobs by their end
and starts where the last stopped, so a batch costs the same however many
jobs the table holds or the prune removes: thousands of jobs a second, with
their logs, attempts and events. --dry-run counts what would be deleted and
deletes nothing.

D is a duration such as 90m, 12h or 30d (days may lead: 1d12h). To prune
continuously instead, run the nodes with 'jobctl serve --retain D'.

It prints how many jobs and events were deleted; -o json prints
{"removed", "events_removed", "older_than", "finished_before", "dry_run"}.`,
		Example: `  # delete every job that ended more than 30 days ago
  jobctl prune --older-than 30d

  # how many failed or cancelled jobs ended more than a week ago?
  jobctl prune --older-than 7d --state failed,cancelled --dry-run

  # from cron, for monitoring
  jobctl prune --older-than 30d -o json --jq .removed`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("older-than") {
				return usageErrorf(cmd, "--older-than is required: how long ago a job must have ended to be deleted, e.g. 30d")
			}
			if opts.OlderThan <= 0 {
				return usageErrorf(cmd, "invalid --older-than %s: want a duration above 0 such as 90m, 12h or 30d", opts.OlderThan)
			}
			opts.Statuses = nil
			for _, v := range states {
				st, err := engine.ParseStatus(strings.TrimSpace(v))
				if err != nil {
					return usageErrorf(cmd, "invalid --state %q: %v", v, err)
				}
				if !st.Terminal() {
					return usageErrorf(cmd, "invalid --state %q: only ended jobs are pruned (%s)", v, terminalStateNames())
				}
				opts.Statuses = append(opts.Statuses, st)
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return pruneRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.Var((*daysValue)(&opts.OlderThan), "older-than", "delete jobs that ended longer ago than this `DURATION` (90m, 12h, 30d); required")
	fl.StringSliceVar(&states, "state", nil, "only jobs that ended in these states (comma-separated, repeatable; default every ended state)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "count the jobs that would be deleted, delete nothing")
	addReasonFlag(cmd, &opts.Audit)
	addOutputFlags(cmd, &opts.Output, false)
	_ = cmd.RegisterFlagCompletionFunc("older-than", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("state", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return strings.Split(terminalStateNames(), ", "), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// terminalStateNames lists the ended states as --state takes them.
func terminalStateNames() string {
	names := make([]string, len(engine.TerminalStatuses))
	for i, s := range engine.TerminalStatuses {
		names[i] = strings.ToLower(string(s))
	}
	return strings.Join(names, ", ")
}

func pruneRun(ctx context.Context, opts *PruneOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	res, err := engine.Prune(ctx, store, engine.PruneParams{
		OlderThan: opts.OlderThan, Statuses: opts.Statuses, DryRun: opts.DryRun,
	})
	if !opts.DryRun && res.Removed+res.EventsRemoved > 0 {
		// The prune is many transactions, so its event is one of its own,
		// recorded once the batches are in, also after a failure part-way.
		detail := fmt.Sprintf("%d %s and %d %s before %s (older than %s)", res.Removed, plural(res.Removed, "job", "jobs"),
			res.EventsRemoved, plural(res.EventsRemoved, "event", "events"), res.Cutoff.UTC().Format(time.RFC3339), opts.OlderThan)
		rerr := engine.Recorded(ctx, store, opts.Audit.actor(), engine.EventAppendParams{Verb: engine.EventPrune, Detail: detail},
			func(engine.TxStore, *engine.EventAppendParams) error { return nil })
		if err == nil {
			err = rerr
		}
	}
	if err != nil {
		if res.Removed > 0 {
			// Batches already committed stay deleted; say how many.
			fmt.Fprintf(opts.IO.ErrOut, "deleted %d %s before stopping\n", res.Removed, plural(res.Removed, "job", "jobs"))
		}
		return err
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, pruneResult{
			Removed: res.Removed, EventsRemoved: res.EventsRemoved, OlderThan: opts.OlderThan.String(),
			FinishedBefore: res.Cutoff.UTC(), DryRun: opts.DryRun,
		})
	}
	verb := "deleted"
	if opts.DryRun {
		verb = "would delete"
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s %d %s that ended before %s", verb, res.Removed,
		plural(res.Removed, "job", "jobs"), res.Cutoff.In(opts.IO.Zone()).Format(time.RFC3339))
	if err == nil && len(opts.Statuses) == 0 {
		_, err = fmt.Fprintf(opts.IO.Out, ", and %d %s naming no job recorded before then",
			res.EventsRemoved, plural(res.EventsRemoved, "event", "events"))
	}
	if err == nil {
		_, err = fmt.Fprintln(opts.IO.Out)
	}
	return err
}

// daysValue is a duration flag that also takes whole days: 30d, 1d12h, 90m.
type daysValue time.Duration

func (v *daysValue) String() string {
	if *v == 0 {
		return "0" // no default worth showing in the help
	}
	return time.Duration(*v).String()
}
func (v *daysValue) Type() string { return "duration" }
func (v *daysValue) Set(s string) error {
	d, err := parseDays(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want a duration such as 90m, 12h or 30d")
	}
	*v = daysValue(d)
	return nil
}

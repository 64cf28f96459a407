package commands

import (
	"context"
	"fmt"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
	"github.com/spf13/cobra"
)

// ExplainOptions are the parsed flags of `jobctl explain`.
type ExplainOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	ID       int64
	Selector string
	Output   outputOptions
}

// NewCmdExplain builds `jobctl explain`. runF replaces the action in tests.
func NewCmdExplain(f *Factory, runF func(context.Context, *ExplainOptions) error) *cobra.Command {
	opts := &ExplainOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		ValidArgsFunction: completeJobIDs(f),
		Use:               "explain ID",
		Short:             "Explain where a job can run, or why it waits",
		Long: `Judge one job the way the dispatcher does, on the cluster as the database
holds it now: whether it is dispatchable or what holds it back (held,
delayed, waiting behind another job of its key or for the rollback of a
job of its key that failed, paused, ended, or its type
at its limit of running jobs, see 'jobctl limits'), how its parent changes
where it may go, every node's verdict with the figures behind it and its
rank in the selector's order, and one concluding line. It says plainly
when no node can ever run the job, and what would change that. Nothing is
changed.

-o json prints an object with the stable fields job, now, hold,
dispatchable, hold_reason, parent_rule, first_child, oversized,
largest_max_load, kept_node, next_keep, selector, type_limit (type,
max_running, running, updated_at; absent when the type has no limit),
at_limit, nodes (node, state, eligible, rank, cause, reason, load,
max_load, running, max_jobs, kept_for, overload), never_runnable, never,
hint, conclusion and load_check: what the latest measured runs of the
job's type used beside their declared load, as 'jobctl stats' shows it
(null when none was measured). When the declared load is far from the
use, explain says so in a last line, as in "load: transcode: declared
load 1, uses 3.2 cores p95 over 40 runs": the dispatcher places jobs by
their declared load, so one that is not true over- or underfills nodes.

Exit status: 0 when the job was explained, whatever the verdict; 2 for a
usage error; 3 for an unknown job.`,
		Example: `  # why is job 42 still queued?
  jobctl explain 42

  # the rank the random selector would give the nodes
  jobctl explain 42 --selector random

  # in a script: can it ever run?
  jobctl explain 42 -o json | jq .never_runnable`,
		Args: exactArgs(1, "a job id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(cmd, args[0])
			if err != nil {
				return err
			}
			if _, err := placement.ParseSelector(opts.Selector); err != nil {
				return usageErrorf(cmd, "invalid --selector: %v", err)
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return explainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Selector, "selector", placement.SelectorLoadFactor, "the ordering to rank the eligible nodes by")
	_ = cmd.RegisterFlagCompletionFunc("selector", completeSelectors)
	addOutputFlags(cmd, &opts.Output, false)
	addHeaderFlags(cmd)
	return cmd
}

func explainRun(ctx context.Context, opts *ExplainOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	selector, err := placement.ParseSelector(opts.Selector)
	if err != nil {
		return err
	}
	e, err := dispatch.Explain(ctx, store, opts.ID, selector)
	if err != nil {
		return err
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, e)
	}
	return printExplanation(opts.IO, e)
}

// printExplanation shows an explanation: the job block, one line per node
// and the conclusion. Piped, every line starts with what it is (job, node,
// conclusion, …), so a script can pick the lines it wants.
func printExplanation(ios *IOStreams, e *dispatch.Explanation) error {
	j := e.Job
	kv := &keyValues{ios: ios}
	kv.add("job", fmt.Sprint(j.ID))
	kv.add("type", j.Type)
	kv.add("load", formatFloat(j.Load))
	kv.add("priority", fmt.Sprint(j.Priority))
	if e.AheadHigher > 0 {
		kv.add("ahead", fmt.Sprintf("%d queued jobs of a higher priority", e.AheadHigher))
	}
	kv.add("status", statusCell(newPalette(ios), j.Status))
	if e.Dispatchable {
		kv.add("dispatchable", "yes")
	} else {
		kv.add("dispatchable", "no: "+e.HoldReason)
	}
	if l := e.TypeLimit; l != nil {
		v := fmt.Sprintf("%d of at most %d running", l.Running, l.MaxRunning)
		if e.AtLimit {
			v += ", held back (jobctl limits)"
		}
		kv.add("type limit", v)
	}
	if e.ParentRule != "" {
		kv.add("parent", e.ParentRule)
	}
	if e.KeptNode != "" {
		kv.add("kept node", e.KeptNode)
	}
	kv.add("selector", e.Selector)
	if err := kv.render(); err != nil {
		return err
	}

	piped := !ios.OutIsTerminal
	var t *table
	if piped {
		t = newTable(ios)
	} else {
		fmt.Fprintln(ios.Out)
		t = newTable(ios, "NODE", "STATE", "RANK", "LOAD", "JOBS", "VERDICT")
	}
	p := newPalette(ios)
	for _, v := range e.Nodes {
		rank, reason := "", p.red(v.Reason)
		if v.Rank > 0 {
			rank, reason = fmt.Sprint(v.Rank), p.green(v.Reason)
		}
		jobs := fmt.Sprint(v.Running)
		if v.MaxJobs > 0 {
			jobs += "/" + fmt.Sprint(v.MaxJobs)
		}
		cells := []string{v.Node, string(v.State), rank, formatFloat(v.Load) + "/" + formatFloat(v.MaxLoad), jobs, reason}
		if piped {
			cells = append([]string{"node"}, cells...)
		}
		t.addRow(cells...)
	}
	if err := t.render(); err != nil {
		return err
	}

	end := &keyValues{ios: ios}
	if piped {
		end.add("conclusion", e.Conclusion)
		if e.Hint != "" {
			end.add("hint", e.Hint)
		}
		if c := e.LoadCheck; c != nil && c.Note != "" {
			end.add("load", c.Note)
		}
		return end.render()
	}
	fmt.Fprintln(ios.Out)
	fmt.Fprintln(ios.Out, p.bold(e.Conclusion))
	if e.Hint != "" {
		fmt.Fprintln(ios.Out, "hint: "+e.Hint)
	}
	if c := e.LoadCheck; c != nil && c.Note != "" {
		fmt.Fprintln(ios.Out, p.yellow("load: "+c.Note)+"; the dispatcher places it by its declared load")
	}
	return nil
}

package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// drainPollInterval is how often `nodes drain --wait` looks at the node.
const drainPollInterval = time.Second

// NodesDrainOptions are the parsed flags of `jobctl nodes drain`.
type NodesDrainOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Name     string
	Wait     bool
	Timeout  time.Duration // with Wait; 0: no limit
	Interval time.Duration // how often Wait polls
	Output   outputOptions
}

// NewCmdNodesDrain builds `jobctl nodes drain`. runF replaces the action in tests.
func NewCmdNodesDrain(f *Factory, runF func(context.Context, *NodesDrainOptions) error) *cobra.Command {
	opts := &NodesDrainOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Interval: drainPollInterval}
	cmd := &cobra.Command{
		ValidArgsFunction: completeNodeNames(f),
		Use:               "drain NAME",
		Short:             "Put a node in maintenance and report its remaining jobs",
		Long: `Put a node in maintenance so it gets no new jobs, then list the jobs still
active on it (running, paused, being cancelled, or waiting for children).
With --wait, wait until none is left, so the node can be stopped safely;
--timeout gives up with exit 5.`,
		Example: `  # stop new work and see what still runs
  jobctl nodes drain worker-3

  # wait at most an hour for its jobs to end
  jobctl nodes drain worker-3 --wait --timeout 1h`,
		Args: exactArgs(1, "a node name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.Timeout < 0 {
				return usageErrorf(cmd, "invalid --timeout %s: must not be negative", opts.Timeout)
			}
			if cmd.Flags().Changed("timeout") && !opts.Wait {
				return usageErrorf(cmd, "--timeout needs --wait")
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodesDrainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until no job is active on the node")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "with --wait, give up after this long (exit 5)")
	addOutputFlags(cmd, &opts.Output, true)
	return cmd
}

func nodesDrainRun(ctx context.Context, opts *NodesDrainOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	// stdout lists only the active jobs (ids with -q), so the state change
	// is reported on stderr.
	notes := *opts.IO
	notes.Out, notes.OutIsTerminal = opts.IO.ErrOut, false
	if _, err := enterMaintenance(ctx, store, &notes, opts.Name); err != nil {
		return err
	}
	active, err := activeJobs(ctx, store, opts.Name)
	if err != nil {
		return err
	}
	if len(active) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "node %s is drained: no job is active on it\n", opts.Name)
		if opts.Output.Format == formatJSON {
			return writeJSON(opts.IO.Out, []*engine.Job{})
		}
		return nil
	}
	fmt.Fprintf(opts.IO.ErrOut, "%d %s still active on node %s:\n", len(active), plural(len(active), "job", "jobs"), opts.Name)
	if err := printJobs(opts.IO, opts.Output, opts.Clock.Now(), active, true); err != nil {
		return err
	}
	if !opts.Wait {
		return nil
	}
	waitCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	for len(active) > 0 {
		if err := sleepCtx(waitCtx, opts.Interval); err != nil {
			if ctx.Err() == nil {
				ids := make([]int64, len(active))
				for i, j := range active {
					ids[i] = j.ID
				}
				return &WaitTimeoutError{Timeout: opts.Timeout, Pending: ids}
			}
			return err
		}
		if active, err = activeJobs(ctx, store, opts.Name); err != nil {
			return err
		}
	}
	fmt.Fprintf(opts.IO.ErrOut, "node %s is drained: no job is active on it\n", opts.Name)
	return nil
}

// activeJobs are the jobs that keep a node busy: those holding load on it
// and parents on it waiting for their children, whose process still runs.
func activeJobs(ctx context.Context, store engine.Store, node string) ([]*engine.Job, error) {
	jobs, err := store.JobList(ctx, engine.JobListParams{Node: node, Statuses: engine.RecoverableStatuses})
	if err != nil {
		return nil, err
	}
	active := jobs[:0]
	for _, j := range jobs {
		if j.HoldsLoad() || j.Status == engine.StatusWaiting {
			active = append(active, j)
		}
	}
	return active, nil
}

package commands

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/tui"
)

// TopOptions are the parsed flags of `jobctl top`.
type TopOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Interval time.Duration
}

// NewCmdTop builds `jobctl top`. runF replaces the action in tests.
func NewCmdTop(f *Factory, runF func(context.Context, *TopOptions) error) *cobra.Command {
	opts := &TopOptions{IO: f.IO, Store: f.Store, Clock: f.Clock}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch and steer the cluster live",
		Long: `Show the cluster live in the terminal: the database, the dispatcher and its
lease, the dispatch rate and the jobs per state; a row per node with its
state, a load bar, running jobs, weight and warm-up, load average, free
memory and last heartbeat; and the jobs of one node or of all of them.

Keys: ↑/↓ or k/j move, tab switches pane, enter shows the selected node's
jobs and a those of every node, / filters by state and type; c cancels, p
pauses or resumes, r requeues and e explains the selected job; m turns
maintenance on or off and d drains the selected node; ? shows help, q
quits. c, r, m and d ask first.

Each refresh reads a bounded amount whatever the size of the cluster: the
nodes, the lease, the counts per state (taken afresh every few seconds)
and one page of jobs (those on a node first, then those waiting, then the
most recently ended). It needs a terminal; to follow jobs from a script
use 'jobctl list -w'.`,
		Example: `  # the live view, refreshed every second
  jobctl top

  # refresh every five seconds
  jobctl top --interval 5s`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Interval <= 0 {
				return usageErrorf(cmd, "invalid --interval %s: must be positive", opts.Interval)
			}
			if !opts.IO.OutIsTerminal {
				return usageErrorf(cmd, "jobctl top needs a terminal; to follow jobs from a script use 'jobctl list -w'")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return topRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Interval, "interval", tui.DefaultInterval, "how often to refresh")
	return cmd
}

func topRun(ctx context.Context, opts *TopOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	source := &tui.Source{Store: store, Clock: opts.Clock, Database: storeLocation(store)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	model := tui.New(tui.Options{
		Context:  ctx,
		Fetch:    source.Fetch,
		Actions:  tui.EngineActions{Store: store, Who: operator()},
		Interval: opts.Interval,
		Styles:   tui.NewStyles(!opts.IO.NoColor),
	})
	p := tea.NewProgram(model, tea.WithContext(ctx), tea.WithInput(opts.IO.In), tea.WithOutput(opts.IO.Out),
		// Only for a terminal that does not tell its size; a real one's
		// size wins, and resizing follows it.
		tea.WithWindowSize(80, 24))
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return context.Cause(ctx) // interrupted
		}
		return err
	}
	return nil
}

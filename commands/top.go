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
	// Who names the operator in the events of the dashboard's actions.
	Who func() string
}

// NewCmdTop builds `jobctl top`. runF replaces the action in tests.
func NewCmdTop(f *Factory, runF func(context.Context, *TopOptions) error) *cobra.Command {
	opts := &TopOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Who: newAudit(f).who}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch and steer the cluster live",
		Long: `Show the cluster live in the terminal: the database, the dispatcher and its
lease, the dispatch rate and the jobs per state; a row per node with its
state, a load bar, running jobs, weight and warm-up, load average, free
memory and last heartbeat; and the jobs of one node or of all of them.

The jobs pane shows each job's command and exit code, and a progress bar
for the jobs running now; s sorts it by the next column (the sorted one's
head is marked ▲ or ▼), S the other way.

Keys: ↑/↓ or k/j move, tab switches pane; enter on a node shows its jobs
(a: those of every node), enter on a job opens its detail: the job as
'jobctl show' prints it, who cancelled it and why, the dispatcher's
explanation and the last lines of its log, following while open; l opens
its whole log, following (↑/↓, pgup/pgdn scroll back, end follows again);
/ filters by state and type; c cancels, p pauses or resumes, r requeues and
e explains the selected job; m turns maintenance on or off and d drains the
selected node; ? shows every key, q quits.

c, r, m and d ask first, with a line to type why: enter goes ahead, esc
leaves it as it was. Every change is recorded as an event naming you
(user@host) and that reason, as the commands' --reason does ('jobctl
events'). An action's result stays on the status line a few seconds.

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
	who := opts.Who
	if who == nil {
		who = operator
	}
	model := tui.New(tui.Options{
		Context:  ctx,
		Fetch:    source.Fetch,
		Inspect:  source.Inspect,
		Actions:  tui.EngineActions{Store: store, Who: who()},
		Interval: opts.Interval,
		Styles:   tui.NewStyles(!opts.IO.NoColor),
		Clock:    opts.Clock,
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

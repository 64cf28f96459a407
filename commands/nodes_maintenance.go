package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// NodesMaintenanceOptions are the parsed arguments of `jobctl nodes maintenance`.
type NodesMaintenanceOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Name string
	On   bool
}

// NewCmdNodesMaintenance builds `jobctl nodes maintenance`. runF replaces
// the action in tests.
func NewCmdNodesMaintenance(f *Factory, runF func(context.Context, *NodesMaintenanceOptions) error) *cobra.Command {
	opts := &NodesMaintenanceOptions{IO: f.IO, Store: f.Store}
	return &cobra.Command{
		Use:   "maintenance NAME on|off",
		Short: "Take a node out of dispatch, or bring it back",
		Long: `Put a node in maintenance (on): the dispatcher sends it no new jobs, while
the jobs it runs go on. 'off' makes it ONLINE again. To also wait for its
jobs to end, use 'jobctl nodes drain'.`,
		Example: `  # no new jobs for worker-3
  jobctl nodes maintenance worker-3 on

  # back in service
  jobctl nodes maintenance worker-3 off`,
		Args:      exactArgs(2, "a node name and on or off"),
		ValidArgs: []string{"on", "off"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			switch strings.ToLower(args[1]) {
			case "on":
				opts.On = true
			case "off":
				opts.On = false
			default:
				return usageErrorf(cmd, "invalid switch %q: want on or off", args[1])
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodesMaintenanceRun(cmd.Context(), opts)
		},
	}
}

func nodesMaintenanceRun(ctx context.Context, opts *NodesMaintenanceOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	if opts.On {
		_, err := enterMaintenance(ctx, store, opts.IO, opts.Name)
		return err
	}
	n, err := store.NodeGet(ctx, opts.Name)
	if err != nil {
		return err
	}
	if n.State != engine.NodeMaintenance {
		return fmt.Errorf("node %s is %s, not in maintenance; nothing to turn off", n.Name, n.State)
	}
	if err := store.NodeSetState(ctx, n.Name, engine.NodeOnline); err != nil {
		return err
	}
	printNodeState(opts.IO, n.Name, n.State, engine.NodeOnline)
	return nil
}

// enterMaintenance puts a node in maintenance unless it is already and
// returns it as it was.
func enterMaintenance(ctx context.Context, store engine.Store, ios *IOStreams, name string) (*engine.Node, error) {
	n, err := store.NodeGet(ctx, name)
	if err != nil {
		return nil, err
	}
	if n.State == engine.NodeMaintenance {
		fmt.Fprintf(ios.ErrOut, "node %s is in maintenance already\n", n.Name)
		return n, nil
	}
	if err := store.NodeSetState(ctx, n.Name, engine.NodeMaintenance); err != nil {
		return nil, err
	}
	printNodeState(ios, n.Name, n.State, engine.NodeMaintenance)
	return n, nil
}

func printNodeState(ios *IOStreams, name string, from, to engine.NodeState) {
	if ios.OutIsTerminal {
		p := newPalette(ios)
		fmt.Fprintf(ios.Out, "node %s: %s → %s\n", name, nodeStateCell(p, from), nodeStateCell(p, to))
		return
	}
	fmt.Fprintf(ios.Out, "%s\t%s\n", name, to)
}

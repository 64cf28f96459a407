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
	nodeNames := completeNodeNames(f)
	return &cobra.Command{
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 1 {
				return []cobra.Completion{"on", "off"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nodeNames(cmd, args, toComplete)
		},
		Use:   "maintenance NAME on|off",
		Short: "Take a node out of dispatch, or bring it back",
		Long: `Put a node in maintenance (on): the dispatcher sends it no new jobs, while
the jobs it runs go on. Maintenance outlives restarts of the node, and the
node going OFFLINE and coming back. 'off' ends it: an ONLINE node takes jobs
again, while an OFFLINE or ERROR one stays as it is. To also wait for its
jobs to end, use 'jobctl nodes drain'.`,
		Example: `  # no new jobs for worker-3
  jobctl nodes maintenance worker-3 on

  # back in service
  jobctl nodes maintenance worker-3 off`,
		Args: exactArgs(2, "a node name and on or off"),
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
	if !n.Maintenance {
		return fmt.Errorf("node %s is %s, not in maintenance; nothing to turn off", n.Name, n.State)
	}
	// Only the flag: whether the node is healthy is for the node and the
	// heartbeat to say, so an OFFLINE node stays OFFLINE.
	if err := store.NodeSetMaintenance(ctx, n.Name, false); err != nil {
		return err
	}
	return printMaintenance(ctx, store, opts.IO, n)
}

// enterMaintenance puts a node in maintenance unless it is already and
// returns it as it was.
func enterMaintenance(ctx context.Context, store engine.Store, ios *IOStreams, name string) (*engine.Node, error) {
	n, err := store.NodeGet(ctx, name)
	if err != nil {
		return nil, err
	}
	if n.Maintenance {
		fmt.Fprintf(ios.ErrOut, "node %s is in maintenance already\n", n.Name)
		return n, nil
	}
	if err := store.NodeSetMaintenance(ctx, n.Name, true); err != nil {
		return nil, err
	}
	return n, printMaintenance(ctx, store, ios, n)
}

// printMaintenance reports a change of the maintenance flag with the state
// the node shows now, read back from the store. A node that is not ONLINE
// shows its health rather than MAINTENANCE, so a note says what the flag
// will do once it is back.
func printMaintenance(ctx context.Context, store engine.Store, ios *IOStreams, before *engine.Node) error {
	after, err := store.NodeGet(ctx, before.Name)
	if err != nil {
		return err
	}
	switch {
	case !ios.OutIsTerminal:
		fmt.Fprintf(ios.Out, "%s\t%s\n", after.Name, after.State)
	case before.State != after.State:
		p := newPalette(ios)
		fmt.Fprintf(ios.Out, "node %s: %s → %s\n", after.Name, nodeStateCell(p, before.State), nodeStateCell(p, after.State))
	default:
		p := newPalette(ios)
		fmt.Fprintf(ios.Out, "node %s: %s, maintenance %s\n", after.Name, nodeStateCell(p, after.State), onOff(after.Maintenance))
	}
	if after.State == engine.NodeOnline || after.State == engine.NodeMaintenance {
		return nil
	}
	if after.Maintenance {
		fmt.Fprintf(ios.ErrOut, "node %s is %s; it stays out of dispatch when it is back ONLINE\n", after.Name, after.State)
	} else {
		fmt.Fprintf(ios.ErrOut, "node %s is %s; it takes jobs again when it is back ONLINE\n", after.Name, after.State)
	}
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// NodesMaintenanceOptions are the parsed arguments of `jobctl nodes maintenance`.
type NodesMaintenanceOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Name   string
	On     bool
	Output outputOptions
	Audit  auditOptions
}

// NewCmdNodesMaintenance builds `jobctl nodes maintenance`. runF replaces
// the action in tests.
func NewCmdNodesMaintenance(f *Factory, runF func(context.Context, *NodesMaintenanceOptions) error) *cobra.Command {
	opts := &NodesMaintenanceOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store}
	nodeNames := completeNodeNames(f)
	cmd := &cobra.Command{
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
jobs to end, use 'jobctl nodes drain'.

Both are idempotent: switching to what the node already has changes
nothing, says so on stderr and exits 0. -o json prints the node as
'jobctl nodes -o json' does (an array of one node object), whether it
changed or not.`,
		Example: `  # no new jobs for worker-3
  jobctl nodes maintenance worker-3 on

  # back in service
  jobctl nodes maintenance worker-3 off

  # the node's state and flag afterwards, for a script
  jobctl nodes maintenance worker-3 on -o json | jq -r '.[0] | "\(.state) \(.maintenance)"'`,
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
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodesMaintenanceRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

func nodesMaintenanceRun(ctx context.Context, opts *NodesMaintenanceOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	// With -o json stdout holds only the node object, so the change is
	// reported on stderr.
	ios := opts.IO
	if opts.Output.Format == formatJSON {
		ios = notesOnStderr(opts.IO)
	}
	by := opts.Audit.actor()
	if opts.On {
		_, err = enterMaintenance(ctx, store, ios, opts.Name, by, engine.EventNodesMaintenance)
	} else {
		err = leaveMaintenance(ctx, store, ios, opts.Name, by)
	}
	if err != nil || opts.Output.Format != formatJSON {
		return err
	}
	return writeNodesJSON(ctx, opts.IO, store, opts.Name)
}

// leaveMaintenance clears a node's maintenance flag unless it is clear
// already. Only the flag: whether the node is healthy is for the node and
// the heartbeat to say, so an OFFLINE node stays OFFLINE.
func leaveMaintenance(ctx context.Context, store maintenanceStore, ios *IOStreams, name string, by engine.Actor) error {
	n, changed, err := engine.MaintenanceSet(ctx, store, name, false, by, engine.EventNodesMaintenance)
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(ios.ErrOut, "node %s is out of maintenance already (%s)\n", n.Name, n.State)
		return nil
	}
	return printMaintenance(ctx, store, ios, n)
}

// notesOnStderr returns streams whose stdout is stderr, for reports of a
// change when stdout is kept for what a script reads.
func notesOnStderr(ios *IOStreams) *IOStreams {
	notes := *ios
	notes.Out, notes.OutIsTerminal = ios.ErrOut, false
	return &notes
}

// writeNodesJSON prints the named nodes as 'jobctl nodes -o json' does:
// an array of node objects, read afresh with their live load and whether
// they dispatch.
func writeNodesJSON(ctx context.Context, ios *IOStreams, store nodeReader, names ...string) error {
	all, err := nodeViews(ctx, store)
	if err != nil {
		return err
	}
	views := make([]nodeView, 0, len(names))
	for _, n := range all {
		if slices.Contains(names, n.Name) {
			views = append(views, n)
		}
	}
	return writeJSON(ios.Out, views)
}

// enterMaintenance puts a node in maintenance unless it is already, for
// by, recording it as verb (nodes maintenance, or nodes drain), and
// returns it as it was.
func enterMaintenance(ctx context.Context, store maintenanceStore, ios *IOStreams, name string, by engine.Actor, verb string) (*engine.Node, error) {
	n, changed, err := engine.MaintenanceSet(ctx, store, name, true, by, verb)
	if err != nil {
		return nil, err
	}
	if !changed {
		fmt.Fprintf(ios.ErrOut, "node %s is in maintenance already\n", n.Name)
		return n, nil
	}
	return n, printMaintenance(ctx, store, ios, n)
}

// printMaintenance reports a change of the maintenance flag with the state
// the node shows now (engine.StatusOf, as 'jobctl nodes' shows it), read
// back from the store. A node that is not ONLINE takes no work whatever the
// flag, so a note says what the flag will do once it is back.
func printMaintenance(ctx context.Context, store nodeReader, ios *IOStreams, before *engine.Node) error {
	after, err := store.NodeGet(ctx, before.Name)
	if err != nil {
		return err
	}
	now, err := store.Now(ctx)
	if err != nil {
		return err
	}
	was, is := engine.StatusOf(before, now), engine.StatusOf(after, now)
	p := newPalette(ios)
	switch {
	case !ios.OutIsTerminal:
		fmt.Fprintf(ios.Out, "%s\t%s\n", after.Name, is.Label())
	default:
		fmt.Fprintf(ios.Out, "node %s: %s → %s\n", after.Name, nodeStatusCell(p, was), nodeStatusCell(p, is))
	}
	if is.State == engine.NodeOnline || is.State == engine.NodeWatch {
		return nil
	}
	if after.Maintenance {
		fmt.Fprintf(ios.ErrOut, "node %s is %s; it stays out of dispatch when it is back ONLINE\n", after.Name, is.State)
	} else {
		fmt.Fprintf(ios.ErrOut, "node %s is %s; it takes jobs again when it is back ONLINE\n", after.Name, is.State)
	}
	return nil
}

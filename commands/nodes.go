package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// NewCmdNodes builds `jobctl nodes` and its subcommands; on its own it
// lists the nodes.
func NewCmdNodes(f *Factory) *cobra.Command {
	list := NewCmdNodesList(f, nil)
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List and administer nodes",
		Long: `List the nodes of the cluster (the same as 'jobctl nodes list'), or take a node
out of dispatch with 'maintenance' and 'drain'.`,
		Example: `  # every node with its load
  jobctl nodes

  # stop sending jobs to a node, and wait until it has none
  jobctl nodes drain worker-3 --wait`,
		Args: subcommandArgs,
		RunE: list.RunE,
	}
	// The bare group command lists, so it takes the list's flags too.
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(list, NewCmdNodesMaintenance(f, nil), NewCmdNodesDrain(f, nil))
	return cmd
}

// NodesListOptions are the parsed flags of `jobctl nodes list`.
type NodesListOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Output outputOptions
}

// NewCmdNodesList builds `jobctl nodes list`. runF replaces the action in tests.
func NewCmdNodesList(f *Factory, runF func(context.Context, *NodesListOptions) error) *cobra.Command {
	opts := &NodesListOptions{IO: f.IO, Store: f.Store, Clock: f.Clock}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List nodes",
		Long: `List the registered nodes with their state and current load.

-o json prints an array of node objects with the stable fields name, url,
state, max_load, max_jobs, load, running, weight, dispatcher, last_seen,
services, and the node's reported health; -q prints node names.`,
		Example: `  # nodes and their load
  jobctl nodes list

  # the node that dispatches now
  jobctl nodes -o json | jq -r '.[] | select(.dispatcher) | .name'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodesListRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, true)
	cmd.Flags().Lookup("quiet").Usage = "print only node names, one per line"
	return cmd
}

func nodesListRun(ctx context.Context, opts *NodesListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return err
	}
	switch {
	case opts.Output.Quiet:
		for _, n := range nodes {
			fmt.Fprintln(opts.IO.Out, n.Name)
		}
		return nil
	case opts.Output.Format == formatJSON:
		if nodes == nil {
			nodes = []*engine.Node{}
		}
		return writeJSON(opts.IO.Out, nodes)
	}
	header := []string{"NAME", "STATE", "LOAD", "RUNNING", "WEIGHT", "DISPATCHER", "LAST SEEN"}
	if opts.Output.wide() {
		header = append(header, "URL", "MAX JOBS", "LOAD AVG", "FREE MEMORY", "CORES", "SERVICES", "STARTED")
	}
	ios, now := opts.IO, opts.Clock.Now()
	p := newPalette(ios)
	t := newTable(ios, header...)
	for _, n := range nodes {
		dispatcher := ""
		if n.Dispatcher {
			dispatcher = "yes"
		}
		row := []string{
			n.Name,
			nodeStateCell(p, n.State),
			formatFloat(n.Load) + "/" + formatFloat(n.MaxLoad),
			strconv.Itoa(n.Running),
			strconv.Itoa(n.Weight),
			dispatcher,
			timeCell(ios, now, &n.LastSeen),
		}
		if opts.Output.wide() {
			services := make([]string, len(n.Services))
			for i, s := range n.Services {
				services[i] = s.Type
			}
			row = append(row,
				n.URL,
				strconv.Itoa(n.MaxJobs),
				formatFloat(n.LoadAvg),
				formatBytes(n.MemAvailable),
				strconv.Itoa(n.Cores),
				strings.Join(services, ","),
				timeCell(ios, now, &n.StartedAt),
			)
		}
		t.addRow(row...)
	}
	return t.render()
}

func nodeStateCell(p palette, s engine.NodeState) string {
	switch s {
	case engine.NodeOnline:
		return p.green(string(s))
	case engine.NodeMaintenance:
		return p.yellow(string(s))
	case engine.NodeError:
		return p.red(string(s))
	}
	return p.gray(string(s))
}

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
		Long: `List the nodes of the cluster (the same as 'jobctl nodes list'), take a node
out of dispatch with 'maintenance' and 'drain', or forget one that is gone
with 'rm'.`,
		Example: `  # every node with its load
  jobctl nodes

  # stop sending jobs to a node, and wait until it has none
  jobctl nodes drain worker-3 --wait

  # forget a node whose machine is gone
  jobctl nodes rm worker-3`,
		Args: subcommandArgs,
		RunE: list.RunE,
	}
	// The bare group command lists, so it takes the list's flags too.
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(list, NewCmdNodesMaintenance(f, nil), NewCmdNodesDrain(f, nil), NewCmdNodesRemove(f, nil))
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

A node whose machine is too busy for new work (load average above its
limit, or free memory under its reserve) takes no jobs until that passes;
the NOTE column says so and why, as of the node's last health report.

-o json prints an array of node objects with the stable fields name, url,
state, max_load, max_jobs, load, running, weight, dispatcher, last_seen,
services, and the node's reported health: load_avg, max_load_avg (the
load-average limit in force, twice the cores unless 'serve --max-load-avg'
sets it; 0 only when the node's gate is off), mem_available and
reserved_memory (bytes), cores, overloaded (bool) and overload_reason.
-q prints node names.`,
		Example: `  # nodes and their load
  jobctl nodes list

  # the node that dispatches now
  jobctl nodes -o json | jq -r '.[] | select(.dispatcher) | .name'

  # nodes held back by a busy machine, and why
  jobctl nodes -o json | jq -r '.[] | select(.overloaded) | "\(.name): \(.overload_reason)"'`,
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
	addHeaderFlags(cmd)
	cmd.Flags().Lookup("quiet").Usage = "print only node names, one per line"
	return cmd
}

// nodeView is a node as `nodes` prints it: every field of the stored node
// and whether its machine's health keeps it from taking new jobs, which
// placement judges but the node record does not hold.
type nodeView struct {
	*engine.Node
	Overloaded     bool   `json:"overloaded"`
	OverloadReason string `json:"overload_reason"`
}

func newNodeView(n *engine.Node) nodeView {
	o := n.Overloaded()
	return nodeView{Node: n, Overloaded: o.Kind != "", OverloadReason: o.Reason}
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
	views := make([]nodeView, len(nodes))
	for i, n := range nodes {
		views[i] = newNodeView(n)
	}
	switch {
	case opts.Output.Quiet:
		for _, n := range nodes {
			fmt.Fprintln(opts.IO.Out, n.Name)
		}
		return nil
	case opts.Output.Format == formatJSON:
		return writeJSON(opts.IO.Out, views)
	}
	header := []string{"NAME", "STATE", "LOAD", "RUNNING", "WEIGHT", "DISPATCHER", "LAST SEEN"}
	if opts.Output.wide() {
		header = append(header, "URL", "MAX JOBS", "LOAD AVG", "FREE MEMORY", "CORES", "SERVICES", "STARTED")
	}
	// The note comes last: it is often empty, and long when it is not.
	header = append(header, "NOTE")
	ios, now := opts.IO, opts.Clock.Now()
	p := newPalette(ios)
	t := newTable(ios, header...)
	for _, n := range views {
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
			limit := "off"
			if n.MaxLoadAvg > 0 {
				limit = formatFloat(n.MaxLoadAvg)
			}
			row = append(row,
				n.URL,
				strconv.Itoa(n.MaxJobs),
				formatFloat(n.LoadAvg)+"/"+limit,
				formatBytes(n.MemAvailable),
				strconv.Itoa(n.Cores),
				strings.Join(services, ","),
				timeCell(ios, now, &n.StartedAt),
			)
		}
		note := ""
		if n.Overloaded {
			note = p.yellow("overloaded: " + n.OverloadReason)
		}
		t.addRow(append(row, note)...)
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

package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
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

STATE is what the cluster does with the node now, judged on the database's
clock (so 'jobctl top' says the same):

  ONLINE   alive: it records its liveness and answers heartbeats
  WATCH    a dispatcher's heartbeat went unanswered (a second miss marks it
           OFFLINE), or it is late recording that it is alive
  LOST     silent longer than its node lease: it has stopped its own runs,
           and the dispatcher puts its jobs back in the queue
  OFFLINE  stopped, or marked so by heartbeats
  ERROR    in error

followed by ,MAINTENANCE while an operator holds it out of dispatch, and
,OVERLOADED while its machine is too busy (load average above its limit:
it gets work only when no node under its limit can take it) or short of
memory (under its reserve: no new work). NOTE says why, and for how long,
as of now: a node that stopped reporting shows no stale health.

-o json prints an array of node objects with the stable fields name, url,
state (as above, without the flags), maintenance, max_load, max_jobs, load,
running, weight, dispatcher, last_seen, node_lease, beat_missed_at (the
first unanswered heartbeat of a row, or null), services, note, and the
node's reported health: load_avg, max_load_avg (the load-average limit in
force, twice the cores unless 'serve --max-load-avg' sets it; 0 only when
the node's gate is off), mem_available and reserved_memory (bytes), cores,
overloaded (bool; never for a node that is LOST, OFFLINE or ERROR),
overload_reason, and running_usage: what the node measured of each job it
runs, as of its last liveness report ({job_id, attempt, cpu_seconds,
cores, memory_bytes}; see 'jobctl help usage'). -q prints node names.
Before any node or command has made the database, -o json prints [] and
exits 3 with the line that says so.`,
		Example: `  # nodes and their load
  jobctl nodes list

  # the node that dispatches now
  jobctl nodes -o json | jq -r '.[] | select(.dispatcher) | .name'

  # nodes held back by a busy machine, and why
  jobctl nodes -o json | jq -r '.[] | select(.overloaded) | "\(.name): \(.overload_reason)"'

  # nodes whose jobs are being put back in the queue
  jobctl nodes -o json | jq -r '.[] | select(.state == "LOST") | .name'`,
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

// nodeView is a node as `nodes` prints it: every field of the stored node,
// with the state and health shown as engine.StatusOf judges them on the
// database's clock, so a node silent past its node lease shows LOST and a
// dead node's last health report is no longer news.
type nodeView struct {
	*engine.Node
	// State shadows the stored state: ONLINE, WATCH, LOST, OFFLINE or ERROR.
	State          engine.NodeState `json:"state"`
	Overloaded     bool             `json:"overloaded"`
	OverloadReason string           `json:"overload_reason"`
	Note           string           `json:"note"`

	status engine.NodeStatus
}

func newNodeView(n *engine.Node, now time.Time) nodeView {
	st := engine.StatusOf(n, now)
	return nodeView{Node: n, State: st.State, Overloaded: st.Overload.Kind != "", OverloadReason: st.Overload.Reason,
		Note: st.Note, status: st}
}

// nodeViews reads the nodes and the database's clock they are judged at.
func nodeViews(ctx context.Context, store nodeReader) ([]nodeView, error) {
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return nil, err
	}
	now, err := store.Now(ctx)
	if err != nil {
		return nil, err
	}
	views := make([]nodeView, len(nodes))
	for i, n := range nodes {
		views[i] = newNodeView(n, now)
	}
	return views, nil
}

func nodesListRun(ctx context.Context, opts *NodesListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		var missing *NoDatabaseError
		if errors.As(err, &missing) && opts.Output.Format == formatJSON {
			// No database yet is no node yet: a script waiting for its
			// first node reads an empty list, beside the exit code (3) and
			// the line that say why.
			_ = writeJSON(opts.IO.Out, []nodeView{})
		}
		return err
	}
	views, err := nodeViews(ctx, store)
	if err != nil {
		return err
	}
	switch {
	case opts.Output.Quiet:
		for _, n := range views {
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
			nodeStatusCell(p, n.status),
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
				human.Bytes(n.MemAvailable),
				strconv.Itoa(n.Cores),
				strings.Join(services, ","),
				timeCell(ios, now, &n.StartedAt),
			)
		}
		note := n.Note
		if note != "" {
			note = p.yellow(note)
		}
		t.addRow(append(row, note)...)
	}
	return t.render()
}

// nodeStatusCell is a node's state with its flags (NodeStatus.Label),
// coloured by its liveness.
func nodeStatusCell(p palette, st engine.NodeStatus) string {
	switch st.State {
	case engine.NodeOnline:
		if st.Maintenance || st.Overload.Kind != "" {
			return p.yellow(st.Label())
		}
		return p.green(st.Label())
	case engine.NodeWatch:
		return p.yellow(st.Label())
	case engine.NodeLost, engine.NodeError:
		return p.red(st.Label())
	}
	return p.gray(st.Label())
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

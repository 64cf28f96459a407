package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// NodesRemoveOptions are the parsed flags of `jobctl nodes rm`.
type NodesRemoveOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Names  []string
	Force  bool
	Output outputOptions
	Audit  auditOptions
}

// NewCmdNodesRemove builds `jobctl nodes rm`. runF replaces the action in tests.
func NewCmdNodesRemove(f *Factory, runF func(context.Context, *NodesRemoveOptions) error) *cobra.Command {
	opts := &NodesRemoveOptions{IO: f.IO, Store: f.Store, Audit: newAudit(f)}
	cmd := &cobra.Command{
		ValidArgsFunction: completeNodeNames(f),
		Use:               "rm NAME...",
		Aliases:           []string{"remove"},
		Short:             "Remove nodes that are gone",
		Long: fmt.Sprintf(`Remove the rows of nodes that are gone: stopped (OFFLINE), or silent for
longer than their node lease (--node-lease of 'jobctl serve', default %s)
and a margin of %s. A node started again under the same name registers
anew.

Jobs the node still holds (running, paused, being cancelled, waiting for
children) are never left pointing at a node that no longer exists: when
the node has been silent past its node lease and the margin, it has
stopped its runs, and its jobs are recovered first, as the dispatcher
recovers the jobs of a silent node: they go back to the queue (RESTART)
and the unfinished children of their lost attempts are cancelled, and a
job that was being cancelled ends CANCELLED, all in the transaction that
removes the node. A node seen more recently that still holds jobs is
refused: its processes may still run them.

A node that is alive (not OFFLINE and seen within its node lease and the
margin) is refused unless
--force; --force removes the row of a node without jobs all the same (a
process still behind it goes on without a row until it is restarted),
but never takes jobs from a node that is alive: drain it first with
'jobctl nodes drain NAME --deadline 0'.

Piped, each removed node's name is printed; -o json prints the removed
nodes as 'jobctl nodes -o json' shows them (an array of node objects, as
they were just before removal).`, engine.DefaultNodeLease, engine.NodeLeaseMargin),
		Example: `  # forget a machine that was switched off for good
  jobctl nodes rm worker-3

  # remove every node that is OFFLINE
  jobctl nodes -o json | jq -r '.[] | select(.state == "OFFLINE") | .name' | xargs -r jobctl nodes rm`,
		Args: minArgs(1, "a node name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodesRemoveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove a node without jobs even though it looks alive")
	addReasonFlag(cmd, &opts.Audit)
	addOutputFlags(cmd, &opts.Output, false)
	return cmd
}

func nodesRemoveRun(ctx context.Context, opts *NodesRemoveOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var removed []nodeView
	var errs []error
	for _, name := range opts.Names {
		n, err := removeNode(ctx, store, opts, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, n)
		switch {
		case opts.Output.Format == formatJSON:
		case opts.IO.OutIsTerminal:
			fmt.Fprintf(opts.IO.Out, "removed node %s\n", name)
		default:
			fmt.Fprintln(opts.IO.Out, name)
		}
	}
	if opts.Output.Format == formatJSON {
		if removed == nil {
			removed = []nodeView{}
		}
		if err := writeJSON(opts.IO.Out, removed); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// removeNode removes one node, recovering its jobs first when it is surely
// gone, and returns it as it was.
func removeNode(ctx context.Context, store nodeRemoveStore, opts *NodesRemoveOptions, name string) (nodeView, error) {
	n, err := nodeWithLoad(ctx, store, name)
	if err != nil {
		return nodeView{}, err
	}
	now, err := store.Now(ctx)
	if err != nil {
		return nodeView{}, err
	}
	silent := now.Sub(n.LastSeen)
	gone := silent > n.GoneAfter()
	alive := n.State != engine.NodeOffline && !gone
	if alive && !opts.Force {
		return nodeView{}, fmt.Errorf("node %s is %s and was last seen %s ago: it looks alive; stop it first, or give --force to remove it anyway",
			name, n.State, silent.Round(time.Millisecond))
	}
	held, err := store.JobList(ctx, engine.JobListParams{Node: name, Statuses: engine.RecoverableStatuses})
	if err != nil {
		return nodeView{}, err
	}
	if len(held) > 0 && !gone {
		how := "wait until it has been silent for " + n.GoneAfter().String()
		if alive {
			how = fmt.Sprintf("drain it first with 'jobctl nodes drain %s --deadline 0'", name)
		}
		return nodeView{}, fmt.Errorf("node %s still holds %d %s and was seen %s ago, so they may still run there; %s",
			name, len(held), plural(len(held), "job", "jobs"), silent.Round(time.Millisecond), how)
	}
	staleAfter := n.GoneAfter()
	if opts.Force {
		staleAfter = 0 // every row counts as gone
	}
	detail := fmt.Sprintf("%s, last seen %s ago", n.State, silent.Round(time.Second))
	if alive {
		detail += ", forced"
	}
	recovered, err := engine.RemoveNode(ctx, store, engine.RemoveNodeParams{
		Name:        name,
		StaleAfter:  staleAfter,
		RecoverJobs: gone,
		Why:         "node " + name + " was removed",
		Event:       engine.EventAppendParams{Verb: engine.EventNodesRm, Detail: detail},
	}, opts.Audit.actor())
	if errors.Is(err, engine.ErrChildrenLeft) {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %v; the dispatcher cancels them\n", err)
		err = nil
	}
	if err != nil {
		if errors.Is(err, engine.ErrNodeOnline) {
			return nodeView{}, fmt.Errorf("node %s came back while it was being removed: %w", name, err)
		}
		return nodeView{}, err
	}
	for _, j := range recovered {
		if to := engine.RecoverUpdate(j, "").To; to == engine.StatusRestart {
			fmt.Fprintf(opts.IO.ErrOut, "job %d of node %s is back in the queue\n", j.ID, name)
		} else {
			fmt.Fprintf(opts.IO.ErrOut, "job %d of node %s ended %s: it was being cancelled\n", j.ID, name, to)
		}
	}
	return newNodeView(n, now), nil
}

// nodeWithLoad reads one node as 'jobctl nodes' lists it, with its live
// load and whether it dispatches.
func nodeWithLoad(ctx context.Context, store nodeReader, name string) (*engine.Node, error) {
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.Name == name {
			return n, nil
		}
	}
	// NodeGet words the not-found error like every other lookup.
	return store.NodeGet(ctx, name)
}

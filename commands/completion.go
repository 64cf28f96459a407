package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// completionLimit bounds how many job ids a completion offers: the newest.
const completionLimit = 200

// completionStore is the store a completion reads, with the context to read
// it in (cobra calls completions without one at times).
func completionStore(cmd *cobra.Command, f *Factory) (context.Context, engine.Store, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	store, err := f.Store(ctx)
	return ctx, store, err
}

// completeJobIDs offers the ids of the newest jobs in the given states (all
// but DELETED when none), each described by its status and type.
func completeJobIDs(f *Factory, states ...engine.Status) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, store, err := completionStore(cmd, f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		if len(states) == 0 {
			states = slices.DeleteFunc(slices.Clone(engine.AllStatuses), func(s engine.Status) bool { return s == engine.StatusDeleted })
		}
		jobs, err := store.JobList(ctx, engine.JobListParams{Statuses: states, Limit: completionLimit})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for i := len(jobs) - 1; i >= 0; i-- { // newest first
			id := fmt.Sprint(jobs[i].ID)
			if slices.Contains(args, id) {
				continue
			}
			out = append(out, cobra.CompletionWithDesc(id, string(jobs[i].Status)+" "+jobs[i].Type))
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeNodeNames offers registered node names for the first argument.
func completeNodeNames(f *Factory) cobra.CompletionFunc {
	nodes := completeNodes(f)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return nodes(cmd, args, toComplete)
	}
}

// completeNodes offers registered node names, each described by its state
// as 'jobctl nodes' shows it: for a flag that takes a node.
func completeNodes(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, store, err := completionStore(cmd, f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		views, err := nodeViews(ctx, store)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		out := make([]cobra.Completion, len(views))
		for i, n := range views {
			out[i] = cobra.CompletionWithDesc(n.Name, n.status.Label())
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTypes offers the job types the registered nodes offer, each
// described by how many nodes offer it; for a flag that takes a
// comma-separated list, what follows the last comma.
func completeTypes(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, store, err := completionStore(cmd, f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		nodes, err := store.NodeList(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		offering := map[string]int{}
		for _, n := range nodes {
			for _, s := range n.Services {
				offering[s.Type]++
			}
		}
		prefix := ""
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			prefix = toComplete[:i+1]
		}
		var out []cobra.Completion
		for _, t := range slices.Sorted(maps.Keys(offering)) {
			if t == engine.TypeWorkflow {
				continue // only 'workflow start' makes those
			}
			out = append(out, cobra.CompletionWithDesc(prefix+t, fmt.Sprintf("offered by %d %s", offering[t], plural(offering[t], "node", "nodes"))))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeArgTypes is completeTypes for a command's first argument.
func completeArgTypes(f *Factory) cobra.CompletionFunc {
	types := completeTypes(f)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return types(cmd, args, toComplete)
	}
}

// completeSelectors offers the --selector names.
func completeSelectors(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return slices.Clone(placement.SelectorNames), cobra.ShellCompDirectiveNoFileComp
}

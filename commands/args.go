package commands

import (
	"slices"
	"strconv"

	"github.com/spf13/cobra"
)

// exactArgs requires exactly n arguments, as a usage error naming them.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < n:
			return usageErrorf(cmd, "missing %s", what)
		case len(args) > n:
			return usageErrorf(cmd, "too many arguments: want %s, got %q", what, args)
		}
		return nil
	}
}

// minArgs requires at least n arguments, as a usage error naming them.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf(cmd, "missing %s", what)
		}
		return nil
	}
}

// parseIDs reads job ids, dropping repeats so each job is handled once.
func parseIDs(cmd *cobra.Command, args []string) ([]int64, error) {
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		id, err := parseID(cmd, a)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func parseID(cmd *cobra.Command, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf(cmd, "invalid job id %q: ids are positive whole numbers", s)
	}
	return id, nil
}

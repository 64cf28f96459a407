package commands

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobctl/jobctl/engine"
)

// checkRollbackFlags refuses a --rollback that does not split into words
// and a --rollback-type without a --rollback or that is no type name, as
// usage errors, before anything is written.
func checkRollbackFlags(cmd *cobra.Command, opts *SubmitOptions) error {
	opts.RollbackType = strings.TrimSpace(opts.RollbackType)
	if cmd.Flags().Changed("rollback-type") {
		if opts.Rollback == "" {
			return usageErrorf(cmd, "--rollback-type needs --rollback: it names the type of the rollback job")
		}
		if problem := engine.NameProblem("rollback type", opts.RollbackType, true); problem != "" {
			return usageErrorf(cmd, "invalid --rollback-type: %s", problem)
		}
	}
	if opts.Rollback != "" {
		if _, err := engine.RollbackArgs(opts.Rollback); err != nil {
			return usageErrorf(cmd, "invalid --rollback: %v", err)
		}
	}
	return nil
}

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
	return checkRollback(cmd, opts.Rollback, &opts.RollbackType)
}

// checkRollback is checkRollbackFlags for any command that takes them,
// given the values of --rollback and --rollback-type (trimmed here).
func checkRollback(cmd *cobra.Command, rollback string, rollbackType *string) error {
	*rollbackType = strings.TrimSpace(*rollbackType)
	if cmd.Flags().Changed("rollback-type") {
		if rollback == "" {
			return usageErrorf(cmd, "--rollback-type needs --rollback: it names the type of the rollback job")
		}
		if problem := engine.NameProblem("rollback type", *rollbackType, true); problem != "" {
			return usageErrorf(cmd, "invalid --rollback-type: %s", problem)
		}
	}
	if rollback != "" {
		if _, err := engine.RollbackArgs(rollback); err != nil {
			return usageErrorf(cmd, "invalid --rollback: %v", err)
		}
	}
	return nil
}

package commands

import (
	"errors"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// auditOptions are what a command that changes the cluster records in the
// change's event besides the change itself: who runs it (the OS user at
// this host) and, with --reason, why.
type auditOptions struct {
	who    func() string
	Reason string
}

// newAudit returns the audit options of a command run through f.
func newAudit(f *Factory) auditOptions {
	who := f.Who
	if who == nil {
		who = operator
	}
	return auditOptions{who: who}
}

// actor is who the change's event names, and why; options made without
// newAudit name the OS user at this host.
func (a auditOptions) actor() engine.Actor {
	who := a.who
	if who == nil {
		who = operator
	}
	return engine.Actor{Who: who(), Reason: a.Reason}
}

// operator names the person running this command: user@host.
func operator() string { return creator() }

// reasonFlagUsage is the help of every --reason flag.
const reasonFlagUsage = "why, recorded with the change (see 'jobctl events')"

// addReasonFlag registers --reason on a command that changes the cluster.
// A reason the audit trail cannot hold is a usage error while the flags
// are read, before anything changes.
func addReasonFlag(cmd *cobra.Command, a *auditOptions) {
	cmd.Flags().Var(&reasonValue{a: a}, "reason", reasonFlagUsage)
	_ = cmd.RegisterFlagCompletionFunc("reason", cobra.NoFileCompletions)
}

// reasonValue is the --reason flag.
type reasonValue struct{ a *auditOptions }

func (v *reasonValue) String() string {
	if v.a == nil {
		return ""
	}
	return v.a.Reason
}
func (v *reasonValue) Type() string { return "text" }
func (v *reasonValue) Set(s string) error {
	if problem := engine.ReasonProblem(s); problem != "" {
		return errors.New(problem)
	}
	v.a.Reason = s
	return nil
}

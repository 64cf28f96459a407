package commands

import (
	"context"
	"fmt"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// VerbOptions are the parsed arguments of an admin verb command.
type VerbOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Verb engine.Verb
	IDs  []int64
}

// verbHelp is the help of each admin verb command.
var verbHelp = map[engine.Verb]struct{ short, long, example string }{
	engine.VerbCancel: {
		short: "Cancel jobs",
		long: `Cancel jobs. A job that no node runs yet ends CANCELLED at once; a running,
paused or waiting job becomes CANCELLING while its node stops the process
(SIGTERM, then SIGKILL after a grace period), then CANCELLED. Cancelling a
job also cancels its unfinished children.`,
		example: `  # cancel two jobs
  jobctl cancel 41 42

  # cancel everything queued of one type
  jobctl list --state queued --type encode -q | xargs jobctl cancel`,
	},
	engine.VerbPause: {
		short: "Pause jobs",
		long: `Pause jobs. A queued job is held back from dispatch; a running job is stopped
on its node (SIGSTOP to its process group) and keeps its place there.`,
		example: `  # hold a queued job, or freeze a running one
  jobctl pause 42`,
	},
	engine.VerbResume: {
		short: "Resume paused jobs",
		long: `Resume paused jobs: a job paused before it ran goes back to the queue, a job
paused while running continues on its node (SIGCONT).`,
		example: `  # continue job 42
  jobctl resume 42`,
	},
	engine.VerbRequeue: {
		short: "Run ended jobs again",
		long: `Put ended jobs (FINISHED, WARNING, FAILED or CANCELLED) back in line as
RESTART, ahead of queued jobs, with their previous result cleared.`,
		example: `  # retry a failed job
  jobctl requeue 42

  # retry every failed job
  jobctl list --state failed -q | xargs jobctl requeue`,
	},
	engine.VerbRelease: {
		short: "Release held jobs",
		long:  `Release jobs submitted with --hold (INSTANTIATED) so they are dispatched.`,
		example: `  # let a held job run
  jobctl release 42`,
	},
	engine.VerbDelete: {
		short: "Delete ended jobs",
		long: `Mark ended jobs DELETED. They leave listings (see them with --state deleted)
and can no longer be requeued.`,
		example: `  # delete a finished job
  jobctl delete 42`,
	},
}

// newVerbCmds builds one command per admin verb. runF replaces the action
// in tests.
// verbCompletionStates are the states of the jobs a verb's completion offers.
var verbCompletionStates = map[engine.Verb][]engine.Status{
	engine.VerbCancel: {engine.StatusInstantiated, engine.StatusQueued, engine.StatusRestart, engine.StatusDispatching,
		engine.StatusRunning, engine.StatusPaused, engine.StatusWaiting},
	engine.VerbPause:   {engine.StatusQueued, engine.StatusRestart, engine.StatusRunning},
	engine.VerbResume:  {engine.StatusPaused},
	engine.VerbRequeue: {engine.StatusFinished, engine.StatusWarning, engine.StatusFailed, engine.StatusCancelled},
	engine.VerbRelease: {engine.StatusInstantiated},
	engine.VerbDelete:  {engine.StatusFinished, engine.StatusWarning, engine.StatusFailed, engine.StatusCancelled},
}

func newVerbCmds(f *Factory, runF func(context.Context, *VerbOptions) error) []*cobra.Command {
	cmds := make([]*cobra.Command, len(engine.Verbs))
	for i, v := range engine.Verbs {
		cmds[i] = NewCmdVerb(f, v, runF)
	}
	return cmds
}

// NewCmdVerb builds the command of one admin verb: `jobctl cancel`, …
func NewCmdVerb(f *Factory, verb engine.Verb, runF func(context.Context, *VerbOptions) error) *cobra.Command {
	opts := &VerbOptions{IO: f.IO, Store: f.Store, Verb: verb}
	help := verbHelp[verb]
	return &cobra.Command{
		ValidArgsFunction: completeJobIDs(f, verbCompletionStates[verb]...),
		Use:               string(verb) + " ID...",
		Short:             help.short,
		Long: help.long + "\n\nA job already " + verb.PastTense() + " (or past the point where it could be) is left as it is and\n" +
			"counts as done. When any job is unknown or cannot be " + verb.PastTense() + " now, none is changed.",
		Example: help.example,
		Args:    minArgs(1, "a job id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseIDs(cmd, args)
			if err != nil {
				return err
			}
			opts.IDs = ids
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return verbRun(cmd.Context(), opts)
		},
	}
}

func verbRun(ctx context.Context, opts *VerbOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	// Check every job first, so a typo in one id does not leave the
	// others half done.
	before := make([]*engine.Job, len(opts.IDs))
	var errs []error
	for i, id := range opts.IDs {
		j, err := store.JobGet(ctx, id)
		if err == nil && !opts.Verb.AlreadyDone(j) {
			_, err = opts.Verb.Update(j)
		}
		if err != nil {
			errs = append(errs, err)
		}
		before[i] = j
	}
	if len(errs) > 0 {
		return joinErrors(errs)
	}
	p := newPalette(opts.IO)
	for i, id := range opts.IDs {
		// A job already done is reported as it is (and a cancel still
		// reaches children left unfinished).
		j, err := engine.ApplyVerb(ctx, store, id, opts.Verb)
		if j != nil {
			if opts.IO.OutIsTerminal {
				fmt.Fprintf(opts.IO.Out, "job %d: %s → %s\n", id, statusCell(p, before[i].Status), statusCell(p, j.Status))
			} else {
				fmt.Fprintf(opts.IO.Out, "%d\t%s\n", id, j.Status)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

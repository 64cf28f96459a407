package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// VerbOptions are the parsed arguments of an admin verb command.
type VerbOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Verb     engine.Verb
	IDs      []int64
	Priority int // requeue --priority; 0 keeps each job's
	Output   outputOptions
	Audit    auditOptions
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

  # cancel one, saying why; 'jobctl show 41' then names you and the reason
  jobctl cancel 41 --reason "input was the wrong file"

  # cancel everything queued of one type (none queued: nothing to do)
  jobctl list --state queued --type encode -q | jobctl cancel -`,
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
RESTART, ahead of queued jobs, with their previous result cleared.
--priority gives them a new priority (1 to 100, higher first), which orders
them among the other RESTART jobs and stays with them.`,
		example: `  # retry a failed job
  jobctl requeue 42

  # retry it before every other job waiting to run again
  jobctl requeue --priority 100 42

  # retry every failed job; with xargs, -r keeps an empty list from running it
  jobctl list --state failed -q | jobctl requeue -
  jobctl list --state failed -q | xargs -r jobctl requeue`,
	},
	engine.VerbRelease: {
		short: "Release held jobs",
		long:  `Release jobs submitted with --hold (INSTANTIATED) so they are dispatched.`,
		example: `  # let a held job run
  jobctl release 42

  # release every held job
  jobctl list --state instantiated -q | jobctl release -`,
	},
	engine.VerbDelete: {
		short: "Delete ended jobs",
		long: `Mark ended jobs DELETED. They leave listings (see them with --state deleted)
and can no longer be requeued.`,
		example: `  # delete a finished job
  jobctl delete 42

  # delete every cancelled job, printing them as JSON
  jobctl list --state cancelled -q | jobctl delete - -o json`,
	},
}

// newVerbCmds builds one command per admin verb. runF replaces the action
// in tests.
// verbCompletionStates are the states of the jobs a verb's completion offers.
var verbCompletionStates = map[engine.Verb][]engine.Status{
	engine.VerbCancel: {engine.StatusInstantiated, engine.StatusQueued, engine.StatusRestart,
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
	opts := &VerbOptions{IO: f.IO, Store: f.Store, Verb: verb, Audit: newAudit(f)}
	help := verbHelp[verb]
	cmd := &cobra.Command{
		ValidArgsFunction: completeJobIDs(f, verbCompletionStates[verb]...),
		Use:               string(verb) + " ID...",
		Short:             help.short,
		Long: help.long + "\n\nA job already " + verb.PastTense() + " (or past the point where it could be) is left as it is and\n" +
			"counts as done. When any job is unknown or cannot be " + verb.PastTense() + " now, none is changed.\n\n" +
			"An ID of - reads ids from stdin, separated by blanks or newlines (as 'jobctl list -q'\n" +
			"prints them); when stdin holds none, there is nothing to do and the command exits 0.\n\n" +
			"Each job is printed as it ends up: \"ID<TAB>STATUS\" when piped, \"job ID: OLD → NEW\"\n" +
			"on a terminal, and with -o json a JSON array of the jobs as 'jobctl show -o json' prints them.\n\n" +
			"Each change is recorded as an event naming you (user@host) and, with --reason, why;\n" +
			"'jobctl events --job ID' lists them" + verbEventsHelp(verb) + ".",
		Example: help.example,
		Args:    minArgs(1, "a job id, or - to read ids from stdin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := verbIDs(cmd, args, opts.IO)
			if err != nil {
				return err
			}
			opts.IDs = ids
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if len(ids) == 0 {
				return verbNothing(opts)
			}
			return verbRun(cmd.Context(), opts)
		},
	}
	if verb == engine.VerbRequeue {
		cmd.Flags().Var((*priorityValue)(&opts.Priority), "priority",
			"the jobs' new priority, 1 to 100, higher first (default: each keeps its own)")
	}
	addReasonFlag(cmd, &opts.Audit)
	addOutputFlags(cmd, &opts.Output, false)
	return cmd
}

// verbEventsHelp adds to a verb's help what else its events tell.
func verbEventsHelp(verb engine.Verb) string {
	switch verb {
	case engine.VerbCancel:
		return ", each child cancelled with the job gets one too, and 'jobctl show ID' names\nwho cancelled a job and why"
	case engine.VerbDelete:
		return ", and 'jobctl show ID' names who deleted a job and why"
	}
	return ""
}

// verbIDs reads the ids a verb acts on: its arguments, where one "-"
// stands for the ids on stdin.
func verbIDs(cmd *cobra.Command, args []string, ios *IOStreams) ([]int64, error) {
	var words []string
	fromStdin := false
	for _, a := range args {
		if a != "-" {
			words = append(words, a)
			continue
		}
		if fromStdin {
			return nil, usageErrorf(cmd, "- (ids from stdin) given twice")
		}
		fromStdin = true
		in, err := io.ReadAll(ios.In)
		if err != nil {
			return nil, fmt.Errorf("reading ids from stdin: %w", err)
		}
		words = append(words, strings.Fields(string(in))...)
	}
	return parseIDs(cmd, words)
}

// verbNothing is a verb given no job at all (an empty stdin): it succeeds,
// printing what an empty result looks like.
func verbNothing(opts *VerbOptions) error {
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, []*engine.Job{})
	}
	return nil
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
	jobs := []*engine.Job{}
	for i, id := range opts.IDs {
		// A job already done is reported as it is (and a cancel still
		// reaches children left unfinished).
		j, err := engine.ApplyVerbAs(ctx, store, id, opts.Verb, opts.Audit.actor(),
			engine.VerbEvent{Verb: string(opts.Verb), Priority: opts.Priority})
		if j != nil {
			switch {
			case opts.Output.Format == formatJSON:
				jobs = append(jobs, j)
			case opts.IO.OutIsTerminal:
				fmt.Fprintf(opts.IO.Out, "job %d: %s → %s\n", id, statusCell(p, before[i].Status), statusCell(p, j.Status))
			default:
				fmt.Fprintf(opts.IO.Out, "%d\t%s\n", id, j.Status)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if opts.Output.Format == formatJSON {
		// The jobs changed before a failure are printed too.
		if err := writeJSON(opts.IO.Out, jobs); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

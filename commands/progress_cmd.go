package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobctl/jobctl/engine/endpoint"
)

// ProgressOptions are the parsed arguments of `jobctl progress`.
type ProgressOptions struct {
	IO       *IOStreams
	Job      JobEnv
	Progress endpoint.JobProgress
}

// NewCmdProgress builds `jobctl progress`. runF replaces the action in tests.
func NewCmdProgress(f *Factory, runF func(context.Context, *ProgressOptions) error) *cobra.Command {
	opts := &ProgressOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "progress N [MESSAGE...]",
		Short: "Report the progress of the job this runs in",
		Long: `Report how far the job this runs in has got: N percent (0-100; a trailing
% is allowed), with an optional message ('jobctl show' and 'jobctl wait'
show both).

It works only inside a job: it sends the progress to the job's node with
the job's own token ($JOBCTL_URL, $JOBCTL_JOB_TOKEN). In a job given a
database (--db or JOBCTL_DB) it prints the line "jobctl:progress N MESSAGE"
instead, which the node reads from the job's stdout the same way.`,
		Example: `  # inside a job's script
  jobctl progress 40 copied the input
  jobctl progress 100%`,
		Args: minArgs(1, "the progress N (0-100)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(strings.TrimSuffix(args[0], "%"))
			if err != nil || n < 0 || n > 100 {
				return usageErrorf(cmd, "invalid progress %q: want a whole number from 0 to 100", args[0])
			}
			opts.Progress = endpoint.JobProgress{Percent: n, Message: strings.Join(args[1:], " ")}
			if err := opts.Progress.Check(); err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			if opts.Job = f.job(); !opts.Job.InJob() {
				return usageErrorf(cmd, "progress works only inside a job, which its node gives $JOBCTL_JOB_ID")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return progressRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func progressRun(ctx context.Context, opts *ProgressOptions) error {
	if opts.Job.ViaNode() {
		return opts.Job.Client().Progress(ctx, opts.Progress)
	}
	// A job given a database may still have no token (a node that set
	// none): its stdout reaches the node either way.
	line := fmt.Sprintf("jobctl:progress %d %s", opts.Progress.Percent, oneLineText(opts.Progress.Message))
	_, err := fmt.Fprintln(opts.IO.Out, strings.TrimSpace(line))
	return err
}

// oneLineText keeps a message on one line, as the stdout protocol reads
// one line.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

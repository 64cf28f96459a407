package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// logsPollInterval is how often `logs -f` looks for new output.
const logsPollInterval = 500 * time.Millisecond

// LogsOptions are the parsed flags of `jobctl logs`.
type LogsOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	ID       int64
	Follow   bool
	Attempt  int           // 0: every attempt
	Interval time.Duration // how often -f polls
}

// NewCmdLogs builds `jobctl logs`. runF replaces the action in tests.
func NewCmdLogs(f *Factory, runF func(context.Context, *LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{IO: f.IO, Store: f.Store, Interval: logsPollInterval}
	cmd := &cobra.Command{
		ValidArgsFunction: completeJobIDs(f),
		Use:               "logs ID",
		Short:             "Print a job's output",
		Long: `Print what a job wrote to stdout and stderr, as stored in the database, so it
works from any machine. With -f, keep printing new output until the job ends.`,
		Example: `  # everything job 42 printed
  jobctl logs 42

  # follow it while it runs
  jobctl logs -f 42

  # only its second attempt
  jobctl logs 42 --attempt 2`,
		Args: exactArgs(1, "a job id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(cmd, args[0])
			if err != nil {
				return err
			}
			if opts.Attempt < 0 {
				return usageErrorf(cmd, "invalid --attempt %d: attempts count from 1", opts.Attempt)
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return logsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new output until the job ends")
	cmd.Flags().IntVar(&opts.Attempt, "attempt", 0, "only the output of this attempt")
	return cmd
}

func logsRun(ctx context.Context, opts *LogsOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	// Unknown ids fail here, not as an empty log.
	job, err := store.JobGet(ctx, opts.ID)
	if err != nil {
		return err
	}
	if opts.Attempt > job.Attempt && !opts.Follow {
		return &engine.NotFoundError{What: "attempt", ID: fmt.Sprintf("%d of job %d (it has made %d)", opts.Attempt, job.ID, job.Attempt)}
	}
	var after int64
	for {
		// Read the state before the chunks: output stored before the job
		// ended is then certain to be in this read.
		ended := job.Status.Terminal()
		if after, err = printChunks(ctx, store, opts, after); err != nil {
			return err
		}
		if !opts.Follow || ended {
			return nil
		}
		if err := sleepCtx(ctx, opts.Interval); err != nil {
			return nil // interrupted: what was there has been printed
		}
		if job, err = store.JobGet(ctx, opts.ID); err != nil {
			return err
		}
	}
}

// printChunks prints the stored chunks after seq and returns the last
// sequence number seen.
func printChunks(ctx context.Context, store engine.Store, opts *LogsOptions, after int64) (int64, error) {
	chunks, err := store.JobLogList(ctx, engine.JobLogListParams{JobID: opts.ID, AfterSeq: after})
	if err != nil {
		return after, err
	}
	for _, c := range chunks {
		after = c.Seq
		if opts.Attempt != 0 && c.Attempt != opts.Attempt {
			continue
		}
		if _, err := opts.IO.Out.Write(c.Data); err != nil {
			return after, err
		}
	}
	return after, nil
}

package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
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
	Clock engine.Clock

	ID         int64
	Follow     bool
	Attempt    int           // 0: every attempt
	Tail       *int          // the last Tail lines only; nil: all
	Since      *time.Time    // only what was stored at or after it
	Timestamps bool          // each line begins with when it was stored
	Raw        bool          // the job's own output only
	Interval   time.Duration // how often -f polls
}

// logsHelp is the Long help of `jobctl logs`.
const logsHelp = `Print a job's log, as stored in the database, so it works from any machine.
With -f, keep printing new output until the job ends.

A log holds three streams, stored apart and printed in the order they came:
the job's own output (stdout and stderr, byte for byte), its protocol lines
(the jobctl:progress and jobctl:warning lines that took effect, as written),
and jobctl's notes about the run (paused, resumed, timed out and stopped,
the log cut at its cap). Protocol lines and notes are printed on lines of
their own, marked with [protocol] or [note] in front (gray on a terminal);
--raw prints the job's own output alone, exactly as it wrote it. A log
stored by an older jobctl is all output.

--tail N prints the last N lines of what would be printed, then follows
with -f. --since takes a duration ago (10m, 2h) or a time (RFC 3339, a date,
15:04) and keeps what was stored since. --timestamps begins each line with
the time it was stored (the node stores output a few times a second): local
on a terminal, UTC when piped. --attempt N keeps one attempt's log.`

// NewCmdLogs builds `jobctl logs`. runF replaces the action in tests.
func NewCmdLogs(f *Factory, runF func(context.Context, *LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Interval: logsPollInterval}
	var sinceText string
	var tail int
	cmd := &cobra.Command{
		ValidArgsFunction: completeJobIDs(f),
		Use:               "logs ID",
		Short:             "Print a job's output",
		Long:              logsHelp,
		Example: `  # everything job 42 printed, with jobctl's notes marked
  jobctl logs 42

  # follow it while it runs, from its last 20 lines
  jobctl logs -f --tail 20 42

  # only what the job itself wrote, of its second attempt
  jobctl logs 42 --raw --attempt 2

  # the last ten minutes, each line with the time it was stored
  jobctl logs 42 --since 10m --timestamps`,
		Args: exactArgs(1, "a job id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(cmd, args[0])
			if err != nil {
				return err
			}
			if opts.Attempt < 0 {
				return usageErrorf(cmd, "invalid --attempt %d: attempts count from 1", opts.Attempt)
			}
			switch {
			case tail < -1:
				return usageErrorf(cmd, "invalid --tail %d: give a number of lines, or -1 for all", tail)
			case tail >= 0:
				opts.Tail = &tail
			}
			if cmd.Flags().Changed("since") {
				t, err := parseTimeSpec(sinceText, opts.Clock.Now(), opts.IO.Zone(), towardPast)
				if err != nil {
					return usageErrorf(cmd, "invalid --since %q: want %s", sinceText, pastTimeForms)
				}
				opts.Since = &t
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return logsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new output until the job ends")
	fl.IntVar(&opts.Attempt, "attempt", 0, "only the log of this attempt")
	fl.IntVar(&tail, "tail", -1, "only the last `N` lines (-1: all)")
	fl.StringVar(&sinceText, "since", "", "only what was stored since this `TIME` (a duration ago like 10m, RFC 3339, a date, HH:MM)")
	fl.BoolVar(&opts.Timestamps, "timestamps", false, "begin each line with the time it was stored")
	fl.BoolVar(&opts.Raw, "raw", false, "only the job's own output, as it wrote it: no protocol lines, no notes")
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
	lp := newLogPrinter(opts)
	var after int64
	first := true
	for {
		// Read the state before the chunks: output stored before the job
		// ended is then certain to be in this read.
		ended := job.Status.Terminal()
		if after, err = printChunks(ctx, store, opts, lp, after, first); err != nil {
			return err
		}
		first = false
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

// printChunks prints the stored chunks after seq that the flags keep and
// returns the last sequence number seen. The first read is cut to --tail.
func printChunks(ctx context.Context, store logReader, opts *LogsOptions, lp *logPrinter, after int64, first bool) (int64, error) {
	chunks, err := store.JobLogList(ctx, engine.JobLogListParams{JobID: opts.ID, AfterSeq: after})
	if err != nil {
		return after, err
	}
	var tail *bytes.Buffer
	if first && opts.Tail != nil {
		tail = &bytes.Buffer{}
		lp.w = tail
	}
	for _, c := range chunks {
		after = c.Seq
		if opts.Attempt != 0 && c.Attempt != opts.Attempt || opts.Since != nil && c.CreatedAt.Before(*opts.Since) {
			continue
		}
		if err := lp.chunk(c); err != nil {
			return after, err
		}
	}
	if tail != nil {
		lp.w = opts.IO.Out
		if _, err := io.WriteString(opts.IO.Out, lastLines(tail.String(), *opts.Tail)); err != nil {
			return after, err
		}
	}
	return after, nil
}

// lastLines is the end of text holding its last n lines; an unfinished
// last line counts as one.
func lastLines(text string, n int) string {
	if n == 0 {
		return ""
	}
	end := len(text)
	if strings.HasSuffix(text, "\n") {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if text[i] == '\n' {
			if n--; n == 0 {
				return text[i+1:]
			}
		}
	}
	return text
}

// logPrinter prints log chunks: the job's output as it is, each protocol
// line and note on a line of its own with its stream's mark, and with
// --timestamps the time every line was stored in front of it.
type logPrinter struct {
	w          io.Writer
	ios        *IOStreams
	raw        bool
	timestamps bool
	p          palette
	// lineOpen: the output printed last did not end its line, so a marked
	// line must start a new one and the output's next bytes carry no time.
	lineOpen bool
}

func newLogPrinter(opts *LogsOptions) *logPrinter {
	return &logPrinter{w: opts.IO.Out, ios: opts.IO, raw: opts.Raw, timestamps: opts.Timestamps, p: newPalette(opts.IO)}
}

// chunk prints one chunk.
func (lp *logPrinter) chunk(c engine.LogChunk) error {
	var b bytes.Buffer
	if c.Stream == engine.LogOutput || c.Stream == "" {
		data := c.Data
		for len(data) > 0 {
			if !lp.lineOpen && lp.timestamps {
				b.WriteString(lp.stamp(c.CreatedAt))
			}
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				b.Write(data)
				lp.lineOpen = true
				break
			}
			b.Write(data[:i+1])
			lp.lineOpen, data = false, data[i+1:]
		}
		_, err := lp.w.Write(b.Bytes())
		return err
	}
	if lp.raw {
		return nil
	}
	if lp.lineOpen {
		b.WriteByte('\n')
		lp.lineOpen = false
	}
	for line := range strings.Lines(string(c.Data)) {
		if lp.timestamps {
			b.WriteString(lp.stamp(c.CreatedAt))
		}
		b.WriteString(lp.p.gray("[" + string(c.Stream) + "] " + strings.TrimSuffix(line, "\n")))
		b.WriteByte('\n')
	}
	_, err := lp.w.Write(b.Bytes())
	return err
}

// stamp is the time in front of a line with --timestamps: local on a
// terminal, UTC for scripts, to the millisecond.
func (lp *logPrinter) stamp(t time.Time) string {
	const layout = "2006-01-02T15:04:05.000Z07:00"
	if lp.ios.OutIsTerminal {
		return lp.p.gray(t.In(lp.ios.Zone()).Format(layout)) + " "
	}
	return t.UTC().Format(layout) + " "
}

package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// ShowOptions are the parsed flags of `jobctl show`.
type ShowOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	ID     int64
	Output outputOptions
}

// NewCmdShow builds `jobctl show`. runF replaces the action in tests.
func NewCmdShow(f *Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Store: f.Store, Clock: f.Clock}
	cmd := &cobra.Command{
		ValidArgsFunction: completeJobIDs(f),
		Use:               "show ID",
		Short:             "Show one job",
		Long: `Show everything known about one job.

-o json prints the job object that 'jobctl list -o json' lists, with its
attempts added (see below); its fields are stable: id, type, operation, args, payload, load, status, node, key,
parent_id, attempt, max_attempts, backoff, rollback, run_after, timeout,
progress, progress_message, exit_code, message, version, creator,
created_at, queued_at, started_at, finished_at, rollback_type,
rollback_job_id (the rollback job made after the job's final failure),
rollback_of (on a rollback job, the job it undoes), key_position (its place
in its key's order; null: its own id), double_fault (its rollback job
failed), and dispatcher and
lease_term: the lease holder, and its term of the lease (as 'jobctl lease
-o json' shows it), that the current attempt was started under; show adds
children: the job's children as {id, type, status}, [] when it has none
('jobctl list --tree' shows whole families). The table form counts the
children and lists them below the job.

A job an operator cancelled or deleted says who and why: its message reads
"cancelled by alice@host1: the reason given", and -o json has ended_by, the
event that did it as 'jobctl events -o json' prints it (null otherwise).
'jobctl events --job ID' lists every change made to the job.

Every attempt the job made follows, oldest first: its node, start, end,
exit code and how it ended (the status it left the job in, such as
FINISHED, FAILED, RESTART or CANCELLED, and the message, such as why its
node was given up on). The attempt running now comes last, with no end.
Each attempt shows what it used, as its node measured it (see 'jobctl help
usage'): CPU seconds (user + system), peak memory and wall time; the one
running now shows its CPU so far and the memory it holds now, as its node
last reported them. In JSON they are the "attempts" array of objects with
attempt, node, started_at, ended_at (null while it runs), exit_code,
ending, message and usage ({cpu_seconds, peak_memory_bytes, wall_seconds,
oom_killed}, null when not measured), and for the running one live
({job_id, attempt, cpu_seconds, cores, memory_bytes}) when its node
reported it. The job itself has memory_limit (bytes, 0 for none) and
usage, its last ended attempt's. A job killed at its memory limit ends
with the message "killed: out of memory, limit 2GiB".
Exits 3 for an unknown id.`,
		Example: `  # a job, readable
  jobctl show 42

  # whether a failed job's rollback failed too
  jobctl show 42 -o json | jq .double_fault

  # its status, in a script
  jobctl show 42 -o json | jq -r .status

  # who cancelled it, and why
  jobctl show 42 -o json | jq -r '.ended_by | "\(.who): \(.reason)"'

  # the ids of its children that have not finished well
  jobctl show 42 -o json | jq -r '.children[] | select(.status != "FINISHED") | .id'

  # the node of every attempt and how it ended
  jobctl show 42 -o json | jq -r '.attempts[] | "\(.attempt) \(.node) \(.ending) \(.message)"'`,
		Args: exactArgs(1, "a job id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(cmd, args[0])
			if err != nil {
				return err
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	j, attempts, err := engine.JobAttempts(ctx, store, opts.ID)
	if err != nil {
		return err
	}
	if opts.Output.Quiet {
		return printIDs(opts.IO, []*engine.Job{j})
	}
	children, err := jobChildren(ctx, store, j.ID)
	if err != nil {
		return err
	}
	if err := engine.MarkDoubleFaults(ctx, store, []*engine.Job{j}); err != nil {
		return err
	}
	live, err := nodeLive(ctx, store, j.Node)
	if err != nil {
		return err
	}
	if u, ok := liveOf(live, j); ok && len(attempts) > 0 && attempts[len(attempts)-1].EndedAt == nil {
		attempts[len(attempts)-1].Live = &u
	}
	// Who ended it is the job's last event, if that ended it.
	last, err := store.EventList(ctx, engine.EventListParams{JobID: &j.ID, Limit: 1})
	if err != nil {
		return err
	}
	endedBy := engine.EndedBy(j, last)
	if opts.Output.Format == formatJSON {
		shown := withChildren(j, children)
		shown.Attempts = attempts
		shown.EndedBy = endedBy
		return writeJSON(opts.IO.Out, shown)
	}
	ios, now := opts.IO, opts.Clock.Now()
	kv := &keyValues{ios: ios}
	kv.add("id", fmt.Sprint(j.ID))
	kv.add("status", statusCell(newPalette(ios), j.Status))
	switch {
	case endedBy != nil:
		kv.add("message", engine.EndedText(endedBy))
	case j.Message != "":
		kv.add("message", j.Message)
	}
	kv.add("type", j.Type)
	if j.Operation != "" {
		kv.add("operation", j.Operation)
	}
	if len(j.Args) > 0 {
		kv.add("args", quoteArgs(j.Args))
	}
	kv.add("node", j.Node)
	kv.add("load", formatFloat(j.Load))
	kv.add("priority", fmt.Sprint(j.Priority))
	if j.MemoryLimit > 0 {
		kv.add("memory limit", memoryLimitText(j.MemoryLimit))
	}
	if j.Usage != nil {
		kv.add("last run used", usageSummary(j.Usage))
	}
	kv.add("progress", progressValue(j))
	attempt := fmt.Sprintf("%d of %d", j.Attempt-j.AttemptBase, j.MaxAttempts)
	if j.AttemptBase > 0 {
		attempt += fmt.Sprintf(" since requeued (%d runs in all)", j.Attempt)
	}
	kv.add("attempt", attempt)
	kv.add("exit code", optionalInt(j.ExitCode))
	if j.Key != "" {
		kv.add("key", j.Key)
	}
	if j.ParentID != nil {
		kv.add("parent", fmt.Sprint(*j.ParentID))
	}
	if err := addRollbackLines(ctx, store, kv, j); err != nil {
		return err
	}
	addChildrenRow(kv, children)
	if opts.Output.wide() {
		kv.add("payload", string(j.Payload))
		kv.add("backoff", time.Duration(j.Backoff).String())
		kv.add("version", fmt.Sprint(j.Version))
	}
	kv.add("timeout", time.Duration(j.Timeout).String())
	kv.add("creator", j.Creator)
	kv.add("created", timeValue(ios, now, &j.CreatedAt))
	if j.RunAfter != nil {
		kv.add("run after", timeValue(ios, now, j.RunAfter))
	}
	kv.add("queued", timeValue(ios, now, j.QueuedAt))
	kv.add("started", timeValue(ios, now, j.StartedAt))
	if j.Dispatcher != "" {
		kv.add("dispatched by", fmt.Sprintf("%s (lease term %d)", j.Dispatcher, j.LeaseTerm))
	}
	kv.add("finished", timeValue(ios, now, j.FinishedAt))
	if err := kv.render(); err != nil {
		return err
	}
	if err := printAttempts(ios, now, j, attempts); err != nil {
		return err
	}
	return renderChildren(ios, j.ID, children)
}

func progressValue(j *engine.Job) string {
	s := fmt.Sprintf("%d%%", j.Progress)
	if j.ProgressMessage != "" {
		s += " " + j.ProgressMessage
	}
	return s
}

// quoteArgs shows an argv so that each argument's boundaries are visible.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			out[i] = fmt.Sprintf("%q", a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

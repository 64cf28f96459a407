package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/spf13/cobra"
)

// Polling intervals of wait: quick at first, for short jobs, then
// backing off so a long wait costs the database little.
const (
	waitFirstPoll = 200 * time.Millisecond
	waitMaxPoll   = time.Second
)

// WaitOptions are the parsed flags of `jobctl wait`.
type WaitOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	IDs     []int64
	Timeout time.Duration // 0: no limit
	Output  outputOptions

	// Children waits for the children of the job this runs in, Job.
	Children bool
	Job      JobEnv

	// summary replaces the final table with one readable line per job
	// (submit --wait on a terminal).
	summary bool
	// reasonTiming, when set, replaces how often the reason a job waits is
	// read and how long it stands before it goes to a piped stderr (tests).
	reasonTiming *[2]time.Duration
}

// NewCmdWait builds `jobctl wait`. runF replaces the action in tests.
func NewCmdWait(f *Factory, runF func(context.Context, *WaitOptions) error) *cobra.Command {
	opts := &WaitOptions{IO: f.IO, Store: f.Store, Clock: f.Clock}
	cmd := &cobra.Command{
		ValidArgsFunction: completeJobIDs(f),
		Use:               "wait ID... | --children",
		Short:             "Wait until jobs end",
		Long: `Wait until every given job has ended, then print their final states.

Exits 0 when all ended FINISHED or WARNING, 4 when any ended FAILED,
CANCELLED or DELETED, and 5 when --timeout passes first.

While it waits on a terminal, one line on stderr shows how far the jobs
are (the progress they report with 'jobctl:progress N') and, while a job
has no node yet, why it waits, as 'jobctl explain' would say it ("no node
can take it now: 1 busy"); the line is cleared before the final states are
printed. When stderr is not a terminal no line is drawn; instead, once a
job has waited 10s with nothing changing, one line on stderr says why
("jobctl: job 7 still QUEUED after 10s: ..."), and another whenever that
changes.

Inside a job, --children waits until every child of that job has ended
(those submitted with 'jobctl submit --child'), with the same exit codes;
it asks the job's node, as a job has no database. Meanwhile the job is
WAITING: its process goes on, but it holds no load, so its children can
run even on a node the parent alone fills. It is RUNNING again once the
children have ended (or --timeout passed). A job with no children returns
at once.`,
		Example: `  # wait for two jobs
  jobctl wait 41 42

  # give up after ten minutes
  jobctl wait 41 --timeout 10m || echo "not done: exit $?"

  # inside a job: start two children, then wait for both
  jobctl submit --child -- ./part.sh 1
  jobctl submit --child -- ./part.sh 2
  jobctl wait --children`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ids []int64
			switch {
			case opts.Children && len(args) > 0:
				return usageErrorf(cmd, "--children waits for the children of this job; give no ids with it")
			case opts.Children:
				if opts.Job = f.job(); !opts.Job.InJob() {
					return usageErrorf(cmd, "--children works only inside a job, which its node gives $JOBCTL_JOB_ID")
				}
			default:
				if err := minArgs(1, "a job id")(cmd, args); err != nil {
					return err
				}
				var err error
				if ids, err = parseIDs(cmd, args); err != nil {
					return err
				}
			}
			if opts.Timeout < 0 {
				return usageErrorf(cmd, "invalid --timeout %s: must not be negative", opts.Timeout)
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			opts.IDs = ids
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return waitRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "give up after this long and exit 5 (default: wait as long as it takes)")
	cmd.Flags().BoolVar(&opts.Children, "children", false, "inside a job: wait for every child of that job")
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	return cmd
}

func waitRun(ctx context.Context, opts *WaitOptions) error {
	if opts.Children && opts.Job.ViaNode() {
		return waitChildrenViaNode(ctx, opts)
	}
	if opts.Children {
		return waitChildrenInStore(ctx, opts)
	}
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	waitCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	line := newProgressLine(opts.IO)
	reasons := newWaitReasons(store, opts.IO, opts.Clock)
	if opts.reasonTiming != nil {
		reasons.every, reasons.quiet = opts.reasonTiming[0], opts.reasonTiming[1]
	}
	began := opts.Clock.Now()
	jobs, err := waitForJobs(waitCtx, store, opts.IDs, func(jobs []*engine.Job) {
		text := waitProgress(jobs, opts.Clock.Now().Sub(began))
		if why := reasons.update(waitCtx, jobs); why != "" {
			text += " · " + why
		}
		line.Show(text)
	})
	line.Clear()
	timedOut := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
	if err != nil && !timedOut {
		return err
	}
	if opts.summary {
		for _, j := range jobs {
			fmt.Fprintln(opts.IO.Out, jobSummary(j))
		}
	} else if err := printJobs(opts.IO, opts.Output, opts.Clock.Now(), jobs, true); err != nil {
		return err
	}
	if timedOut {
		var pending []int64
		for _, j := range jobs {
			if !j.Status.Terminal() {
				pending = append(pending, j.ID)
			}
		}
		return &WaitTimeoutError{Timeout: opts.Timeout, Pending: pending}
	}
	var failed []*engine.Job
	for _, j := range jobs {
		if !j.Status.Succeeded() {
			failed = append(failed, j)
		}
	}
	if len(failed) > 0 {
		return &WaitFailedError{Jobs: failed}
	}
	return nil
}

// waitProgress is the progress line of a wait: a bar and the job's own
// message for one job; for several, how many ended and where the others
// stand.
func waitProgress(jobs []*engine.Job, waited time.Duration) string {
	if len(jobs) == 1 {
		j := jobs[0]
		text := fmt.Sprintf("job %d %s", j.ID, j.Status)
		if j.Status == engine.StatusRunning || j.Progress > 0 {
			text += fmt.Sprintf(" %s %d%%", progressBar(j.Progress, 20), j.Progress)
			if j.ProgressMessage != "" {
				text += " " + j.ProgressMessage
			}
		}
		return text + " · " + elapsed(waited)
	}
	ended := 0
	var parts []string
	for _, j := range jobs {
		if j.Status.Terminal() {
			ended++
			continue
		}
		part := fmt.Sprintf("%d %s", j.ID, j.Status)
		if j.Progress > 0 {
			part += fmt.Sprintf(" %d%%", j.Progress)
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%d of %d jobs ended · %s · %s", ended, len(jobs), strings.Join(parts, " · "), elapsed(waited))
}

// jobSummary says in one line how a job ended: "job 42 FINISHED in 3.2s
// (exit 0)", with the job's message when it says more than the exit code.
func jobSummary(j *engine.Job) string {
	text := fmt.Sprintf("job %d %s", j.ID, j.Status)
	if !j.Status.Terminal() {
		return text + " (still waiting)"
	}
	if j.StartedAt != nil && j.FinishedAt != nil && !j.FinishedAt.Before(*j.StartedAt) {
		text += " in " + elapsed(j.FinishedAt.Sub(*j.StartedAt))
	}
	var why []string
	if j.ExitCode != nil {
		why = append(why, fmt.Sprintf("exit %d", *j.ExitCode))
	}
	if j.Message != "" && !strings.HasPrefix(j.Message, "exit code ") {
		why = append(why, j.Message)
	}
	if len(why) > 0 {
		text += " (" + strings.Join(why, "; ") + ")"
	}
	return text
}

// waitForJobs polls until every job is terminal and returns them in the
// order of ids, calling report (if not nil) with the jobs as seen at every
// poll. An unknown id fails at once. When ctx ends first it returns ctx's
// error with each job as last seen.
func waitForJobs(ctx context.Context, store engine.JobGetter, ids []int64, report func([]*engine.Job)) ([]*engine.Job, error) {
	jobs := make([]*engine.Job, len(ids))
	for i, id := range ids {
		j, err := store.JobGet(ctx, id)
		if err != nil {
			return nil, err
		}
		jobs[i] = j
	}
	interval := waitFirstPoll
	for {
		done := true
		for i, j := range jobs {
			if j.Status.Terminal() {
				continue
			}
			fresh, err := store.JobGet(ctx, j.ID)
			if err != nil {
				if ctx.Err() != nil {
					return jobs, ctx.Err()
				}
				return nil, err
			}
			jobs[i] = fresh
			done = done && fresh.Status.Terminal()
		}
		if done {
			return jobs, nil
		}
		if report != nil {
			report(jobs)
		}
		if err := sleepCtx(ctx, interval); err != nil {
			return jobs, err
		}
		interval = min(interval*3/2, waitMaxPoll)
	}
}

// sleepCtx sleeps for d or until ctx ends, returning ctx's error then.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitChildrenInStore is wait --children in a job given a database: the
// children are read once, then waited for like ids.
func waitChildrenInStore(ctx context.Context, opts *WaitOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	children, err := store.JobList(ctx, engine.JobListParams{ParentID: &opts.Job.ID, Brief: true})
	if err != nil {
		return err
	}
	ids := make([]int64, len(children))
	for i, c := range children {
		ids[i] = c.ID
	}
	slices.Sort(ids)
	waitOpts := *opts
	waitOpts.Children, waitOpts.IDs = false, ids
	if len(ids) == 0 {
		return printJobs(opts.IO, opts.Output, opts.Clock.Now(), nil, true)
	}
	return waitRun(ctx, &waitOpts)
}

// waitAnswerMargin is how long past --timeout wait --children gives the
// node to answer, which it does when the timeout passes.
const waitAnswerMargin = 30 * time.Second

// waitChildrenViaNode is wait --children through the job's node: the node
// holds the job WAITING (its load released) until every child has ended,
// or --timeout passes, and answers with the children's states. A node
// without that wait is asked for the children's states until all ended.
func waitChildrenViaNode(ctx context.Context, opts *WaitOptions) error {
	client := opts.Job.Client()
	answerCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		answerCtx, cancel = context.WithTimeout(ctx, opts.Timeout+waitAnswerMargin)
		defer cancel()
	}
	waited, err := client.WaitChildren(answerCtx, opts.Timeout)
	if errors.Is(err, endpoint.ErrNoWait) {
		return pollChildrenViaNode(ctx, opts, client)
	}
	timedOut := err == nil && !waited.Ended
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err, timedOut = nil, true
	}
	if err != nil {
		return err
	}
	return childrenWaited(opts, waited.Children, timedOut)
}

// pollChildrenViaNode is wait --children through a node that can only
// tell the children's states: it asks until all have ended.
func pollChildrenViaNode(ctx context.Context, opts *WaitOptions, client *endpoint.JobClient) error {
	waitCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	var children []endpoint.Child
	var err error
	for interval := waitFirstPoll; ; interval = min(interval*3/2, waitMaxPoll) {
		var fresh []endpoint.Child
		if fresh, err = client.Children(waitCtx); err != nil {
			break
		}
		children = fresh
		if !slices.ContainsFunc(children, func(c endpoint.Child) bool { return !c.Status.Terminal() }) {
			break
		}
		if err = sleepCtx(waitCtx, interval); err != nil {
			break
		}
	}
	timedOut := waitCtx.Err() != nil && ctx.Err() == nil && opts.Timeout > 0
	if err != nil && !timedOut {
		return err
	}
	return childrenWaited(opts, children, timedOut)
}

// childrenWaited prints the children's states and says how the wait went.
func childrenWaited(opts *WaitOptions, children []endpoint.Child, timedOut bool) error {
	slices.SortFunc(children, func(a, b endpoint.Child) int { return cmp.Compare(a.ID, b.ID) })
	if err := printChildren(opts.IO, opts.Output, children); err != nil {
		return err
	}
	var pending []int64
	var failed []*engine.Job
	for _, c := range children {
		switch {
		case !c.Status.Terminal():
			pending = append(pending, c.ID)
		case !c.Status.Succeeded():
			failed = append(failed, &engine.Job{ID: c.ID, Status: c.Status})
		}
	}
	if timedOut {
		return &WaitTimeoutError{Timeout: opts.Timeout, Pending: pending}
	}
	if len(failed) > 0 {
		return &WaitFailedError{Jobs: failed}
	}
	return nil
}

// printChildren prints the children's final states: ID and STATUS, a
// JSON array of {id, status} with -o json, the ids with -q.
func printChildren(ios *IOStreams, o outputOptions, children []endpoint.Child) error {
	switch {
	case o.Quiet:
		for _, c := range children {
			if _, err := fmt.Fprintln(ios.Out, c.ID); err != nil {
				return err
			}
		}
		return nil
	case o.Format == formatJSON:
		if children == nil {
			children = []endpoint.Child{}
		}
		return writeJSON(ios.Out, children)
	}
	t := newTable(ios, "ID", "STATUS")
	for _, c := range children {
		t.addRow(strconv.FormatInt(c.ID, 10), string(c.Status))
	}
	return t.render()
}

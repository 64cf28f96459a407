package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// drainPollInterval is how often `nodes drain --wait` looks at the node.
const drainPollInterval = time.Second

// NodesDrainOptions are the parsed flags of `jobctl nodes drain`.
type NodesDrainOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Name     string
	Wait     bool           // also set by Deadline
	Timeout  time.Duration  // with Wait; 0: no limit
	Deadline *time.Duration // stop what still runs after this long and requeue it; nil: never
	Interval time.Duration  // how often Wait polls
	Output   outputOptions
	Audit    auditOptions
}

// NewCmdNodesDrain builds `jobctl nodes drain`. runF replaces the action in tests.
func NewCmdNodesDrain(f *Factory, runF func(context.Context, *NodesDrainOptions) error) *cobra.Command {
	opts := &NodesDrainOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store, Clock: f.Clock, Interval: drainPollInterval}
	var deadline time.Duration
	cmd := &cobra.Command{
		ValidArgsFunction: completeNodeNames(f),
		Use:               "drain NAME",
		Short:             "Put a node in maintenance and report its remaining jobs",
		Long: `Put a node in maintenance so it gets no new jobs, then list the jobs still
active on it (running, paused, being cancelled, or waiting for children).
With --wait, wait until none is left, so the node can be stopped safely;
--timeout gives up with exit 5. On a terminal, stderr shows how many jobs
are left while it waits.

--deadline D waits too, and once D has passed it puts what still runs on
the node back in the queue: each such job is cancelled on the node, which
stops its process, and as soon as the node reports it stopped the job is
requeued (RESTART, dispatched before queued jobs, with a fresh set of
attempts). So the job runs again from the start on another node, and never
twice at once; the unfinished children of the run it stopped are cancelled
with it, as the new run submits its own. A job already being cancelled is left to end CANCELLED.
--deadline 0 does this at once. A node that is gone stops nothing: its
jobs come back once the dispatcher recovers them, or with 'jobctl nodes rm'. Should drain be interrupted after the
deadline, a job it stopped may be left CANCELLED; it says which, and
'jobctl requeue' puts them back.

-o json prints the node as 'jobctl nodes -o json' does (an array of one
node object), after the wait if there is one; -q prints the ids of the
active jobs.`,
		Example: `  # stop new work and see what still runs
  jobctl nodes drain worker-3

  # wait at most an hour for its jobs to end
  jobctl nodes drain worker-3 --wait --timeout 1h

  # give its jobs ten minutes, then move the rest to other nodes
  jobctl nodes drain worker-3 --deadline 10m`,
		Args: exactArgs(1, "a node name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if opts.Timeout < 0 {
				return usageErrorf(cmd, "invalid --timeout %s: must not be negative", opts.Timeout)
			}
			if cmd.Flags().Changed("deadline") {
				if deadline < 0 {
					return usageErrorf(cmd, "invalid --deadline %s: must not be negative", deadline)
				}
				if opts.Timeout > 0 && opts.Timeout <= deadline {
					return usageErrorf(cmd, "--timeout %s must be longer than --deadline %s: the jobs stopped at the deadline take time to end",
						opts.Timeout, deadline)
				}
				opts.Deadline, opts.Wait = &deadline, true
			}
			if cmd.Flags().Changed("timeout") && !opts.Wait {
				return usageErrorf(cmd, "--timeout needs --wait or --deadline")
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodesDrainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until no job is active on the node")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "with --wait, give up after this long (exit 5)")
	cmd.Flags().DurationVar(&deadline, "deadline", 0, "wait this long, then put what still runs back in the queue (implies --wait)")
	addOutputFlags(cmd, &opts.Output, true)
	addReasonFlag(cmd, &opts.Audit)
	addHeaderFlags(cmd)
	return cmd
}

func nodesDrainRun(ctx context.Context, opts *NodesDrainOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	// stdout lists only the active jobs (ids with -q) or the node (-o
	// json), so the state change is reported on stderr.
	if _, err := enterMaintenance(ctx, store, notesOnStderr(opts.IO), opts.Name, opts.Audit.actor(), engine.EventNodesDrain); err != nil {
		return err
	}
	active, err := engine.NodeBusyJobs(ctx, store, opts.Name)
	if err != nil {
		return err
	}
	if len(active) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "node %s is drained: no job is active on it\n", opts.Name)
		return drainPrintNode(ctx, opts, store)
	}
	fmt.Fprintf(opts.IO.ErrOut, "%d %s still active on node %s:\n", len(active), plural(len(active), "job", "jobs"), opts.Name)
	if opts.Output.Format != formatJSON {
		if err := printJobs(opts.IO, opts.Output, opts.Clock.Now(), active, true); err != nil {
			return err
		}
	} else if err := printJobs(notesOnStderr(opts.IO), outputOptions{Format: formatTable}, opts.Clock.Now(), active, true); err != nil {
		return err
	}
	if !opts.Wait {
		return drainPrintNode(ctx, opts, store)
	}
	if err := drainWait(ctx, opts, store, active); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "node %s is drained: no job is active on it\n", opts.Name)
	return drainPrintNode(ctx, opts, store)
}

// drainPrintNode prints the node for -o json.
func drainPrintNode(ctx context.Context, opts *NodesDrainOptions, store maintenanceStore) error {
	if opts.Output.Format != formatJSON {
		return nil
	}
	return writeNodesJSON(ctx, opts.IO, store, opts.Name)
}

// drainer follows one node's drain: the jobs still active on it and, after
// the deadline, the jobs it stopped to put back in the queue.
type drainer struct {
	opts    *NodesDrainOptions
	store   maintenanceStore
	active  []*engine.Job
	stopped map[int64]bool // cancelled at the deadline, not requeued yet
	passed  bool           // the deadline has passed and the jobs then active were stopped
	line    *progressLine
}

// notef prints a line on stderr below the progress line, which the next
// poll draws again.
func (d *drainer) notef(format string, args ...any) {
	d.line.Clear()
	fmt.Fprintf(d.opts.IO.ErrOut, format, args...)
}

// drainWait polls until no job is active on the node and every job stopped
// at the deadline is back in the queue.
func drainWait(ctx context.Context, opts *NodesDrainOptions, store maintenanceStore, active []*engine.Job) error {
	d := &drainer{opts: opts, store: store, active: active, stopped: map[int64]bool{}, line: newProgressLine(opts.IO)}
	waitCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	began := opts.Clock.Now()
	var deadlineAt time.Time
	if opts.Deadline != nil {
		deadlineAt = began.Add(*opts.Deadline)
	}
	defer d.line.Clear()
	for {
		// Past the deadline, a job that reached the node late (an offer
		// under way as maintenance began) is stopped too.
		if opts.Deadline != nil && !opts.Clock.Now().Before(deadlineAt) {
			stopped, err := d.stopActive(ctx)
			if err != nil {
				return d.interrupted(err)
			}
			d.passed = true
			if stopped > 0 {
				if d.active, err = engine.NodeBusyJobs(ctx, store, opts.Name); err != nil {
					return d.interrupted(err)
				}
			}
		}
		if err := d.requeueStopped(ctx); err != nil {
			return d.interrupted(err)
		}
		if len(d.active) == 0 && len(d.stopped) == 0 {
			return nil
		}
		d.line.Show(d.progress(opts.Clock.Now().Sub(began), deadlineAt))
		if err := sleepCtx(waitCtx, opts.Interval); err != nil {
			d.line.Clear()
			if ctx.Err() == nil {
				return d.interrupted(&WaitTimeoutError{Timeout: opts.Timeout, Pending: d.pending()})
			}
			return d.interrupted(err)
		}
		var err error
		if d.active, err = engine.NodeBusyJobs(ctx, store, opts.Name); err != nil {
			return d.interrupted(err)
		}
	}
}

// progress is the drain's progress line.
func (d *drainer) progress(waited time.Duration, deadlineAt time.Time) string {
	left := len(d.active)
	text := fmt.Sprintf("draining node %s: %d %s left", d.opts.Name, left, plural(left, "job", "jobs"))
	if n := len(d.stopped); n > 0 {
		text += fmt.Sprintf(", %d stopped to go back to the queue", n)
	}
	text += " · " + elapsed(waited)
	if !deadlineAt.IsZero() && !d.passed {
		text += fmt.Sprintf(" · deadline in %s", elapsed(deadlineAt.Sub(d.opts.Clock.Now())))
	}
	return text
}

// pending names every job the drain still waits for.
func (d *drainer) pending() []int64 {
	var ids []int64
	for _, j := range d.active {
		ids = append(ids, j.ID)
	}
	for id := range d.stopped {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// interrupted adds to err which stopped jobs are not back in the queue.
func (d *drainer) interrupted(err error) error {
	if len(d.stopped) == 0 {
		return err
	}
	ids := make([]string, 0, len(d.stopped))
	for _, id := range d.pending() {
		if d.stopped[id] {
			ids = append(ids, fmt.Sprint(id))
		}
	}
	d.notef("jobctl: %s %s stopped at the drain deadline but not back in the queue; once CANCELLED, run 'jobctl requeue %s'\n",
		plural(len(ids), "job", "jobs"), strings.Join(ids, ", "), strings.Join(ids, " "))
	return err
}

// event is how the events of the jobs the drain stops and requeues read.
func (d *drainer) event() engine.VerbEvent {
	return engine.VerbEvent{Verb: engine.EventNodesDrain, Note: "the drain deadline of node " + d.opts.Name + " passed"}
}

// drainMessage says why a job left the node.
func (d *drainer) drainMessage(what string) string {
	return what + ": the drain deadline of node " + d.opts.Name + " passed"
}

// stopActive cancels every job still active on the node, except those
// being cancelled already, so the node stops their processes, and returns
// how many it stopped. The node reports each stop by ending the job
// CANCELLED; only then does requeueStopped put it back in the queue, so no
// run of it overlaps the stopped one. A job that changes meanwhile is read
// again and decided anew.
func (d *drainer) stopActive(ctx context.Context) (int, error) {
	var ids []string
	for _, j := range d.active {
		stopped, left, err := engine.DrainStop(ctx, d.store, j.ID, d.opts.Name, d.drainMessage("stopped to go back to the queue"),
			d.opts.Audit.actor(), d.event())
		if err != nil {
			return len(ids), err
		}
		if left != nil {
			d.notef("warning: job %d: %v; the dispatcher cancels them\n", j.ID, left)
		}
		if stopped {
			d.stopped[j.ID] = true
			ids = append(ids, fmt.Sprint(j.ID))
		}
	}
	if len(ids) > 0 {
		d.notef("deadline passed: stopping %d %s on node %s to put back in the queue: %s\n",
			len(ids), plural(len(ids), "job", "jobs"), d.opts.Name, strings.Join(ids, ", "))
	}
	return len(ids), nil
}

// requeueStopped puts back in the queue each stopped job its node has
// ended (CANCELLED). A job someone else moved on meanwhile (requeued,
// deleted) is theirs and left alone.
func (d *drainer) requeueStopped(ctx context.Context) error {
	for _, id := range slices.Sorted(maps.Keys(d.stopped)) {
		requeued, pending, err := engine.DrainRequeue(ctx, d.store, id, d.drainMessage("requeued"), d.opts.Audit.actor(), d.event())
		if err != nil {
			return err
		}
		if pending {
			continue
		}
		delete(d.stopped, id)
		if requeued {
			d.notef("job %d is back in the queue\n", id)
		}
	}
	return nil
}

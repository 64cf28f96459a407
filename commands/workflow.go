package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/workflow"
	"github.com/spf13/cobra"
)

// defaultWorkflowLimit keeps 'jobctl workflow list' on a screenful or two.
const defaultWorkflowLimit = 50

// NewCmdWorkflow builds `jobctl workflow` and its subcommands; on its own
// it lists the workflows.
func NewCmdWorkflow(f *Factory) *cobra.Command {
	list := NewCmdWorkflowList(f, nil)
	cmd := &cobra.Command{
		Use:     "workflow",
		Aliases: []string{"workflows"},
		Short:   "Run ordered operations as jobs, one after another",
		Long: `A workflow is an ordered list of operations, each run as a job once the one
before it has ended. It is described in a YAML file:

  name: nightly                 # optional; "workflow" when omitted
  operations:
    - name: dump                # optional, "op N" when omitted; names differ
      type: exec                # the job type; exec when omitted and args given
      args: [pg_dump, -f, /tmp/db.sql]
      load: 1                   # optional; the service's load, else 1
      on_failure: stop          # stop (default) or continue
      max_attempts: 3           # optional, as 'jobctl submit --max-attempts'
      run_timeout: 30m          # optional, as 'jobctl submit --run-timeout'
      memory: 2GiB              # optional, as 'jobctl submit --memory'
      payload: {level: 9}       # optional, the job's payload (any YAML)

Unknown fields are an error naming their line, and nothing is created.
"timeout", the old name of run_timeout, still works, with a warning.

'jobctl workflow start' creates the workflow's first job, of type workflow
(operation "start"); its id is the workflow's id. Every node runs workflow
jobs itself. Each such job is one step: it judges how the operation before
it ended and creates the next operation's job and the next step's job, all
children of the first job and all with the key workflow:ID, so they run one
at a time in that order ('jobctl explain' on a waiting step says which
operation it waits for). When an operation did not succeed (FAILED,
CANCELLED) and its on_failure is stop, the step after it fails naming it and
nothing more is created, at once and for good; with continue the workflow
goes on. A step that runs again creates nothing twice, so a step that failed
for a reason that may pass, such as a database outage, is tried again (5
attempts, 1s apart at first, doubling), and after that 'jobctl requeue STEP'
runs it once more.

A workflow's state is read from its jobs: RUNNING while any has not ended;
FAILED when a step stopped it; CANCELLED after 'jobctl workflow cancel';
FINISHED when the last step finished, or WARNING when an operation with
on_failure continue did not succeed (the reason names it).

With no subcommand it lists the workflows, as 'jobctl workflow list'.`,
		Example: `  # run the operations of nightly.yaml one after another
  jobctl workflow start nightly.yaml

  # the workflows, newest first, and how far each has come
  jobctl workflow

  # every operation of workflow 42, its job and how it ended
  jobctl workflow show 42

  # stop it: every job not ended yet is cancelled
  jobctl workflow cancel 42`,
		Args: subcommandArgs,
		RunE: list.RunE,
	}
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(NewCmdWorkflowStart(f, nil), list, NewCmdWorkflowShow(f, nil), NewCmdWorkflowCancel(f, nil))
	return cmd
}

// WorkflowStartOptions are the parsed flags of `jobctl workflow start`.
type WorkflowStartOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	File    string
	Spec    *workflow.Spec
	Creator string
	Output  outputOptions
	Audit   auditOptions
}

// NewCmdWorkflowStart builds `jobctl workflow start`. runF replaces the
// action in tests.
func NewCmdWorkflowStart(f *Factory, runF func(context.Context, *WorkflowStartOptions) error) *cobra.Command {
	opts := &WorkflowStartOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "start FILE",
		Short: "Start a workflow from a YAML file",
		Long: `Start the workflow FILE describes ('-' reads it from stdin; see 'jobctl
workflow --help' for its shape) and print its id on the first line of
stdout. The file is checked whole before anything is created: no
operations, an unknown field or on_failure, a bad type name or a negative
load exit 2 with one line naming the problem.

The first operation is created when a node runs the workflow's first step,
so a cluster with no node up holds the workflow, queued, until one is.
-o json prints the workflow as 'jobctl workflow show -o json' does.`,
		Example: `  # start it and follow it
  id=$(jobctl workflow start nightly.yaml)
  jobctl workflow show "$id"

  # from a pipe
  generate-workflow | jobctl workflow start -`,
		Args: exactArgs(1, "a workflow file (- for stdin)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			spec, err := readWorkflowFile(opts.File, opts.IO.In)
			if err != nil {
				return &UsageError{Err: err, Command: cmd.CommandPath()}
			}
			for _, note := range spec.Deprecated {
				fmt.Fprintf(opts.IO.ErrOut, "jobctl: warning: %s: %s\n", opts.File, note)
			}
			opts.Spec, opts.Creator = spec, creator()
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return workflowStartRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

// readWorkflowFile reads and checks a workflow file; a problem with its
// content is an *engine.InvalidError naming the file. Either problem, a
// file that cannot be read or one that is wrong, is a usage error (exit 2),
// as for every command that reads a file it is given.
func readWorkflowFile(path string, stdin io.Reader) (*workflow.Spec, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = "stdin"
		if stdin == nil {
			return nil, errors.New("no stdin to read the workflow from")
		}
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the workflow: %w", err)
	}
	spec, err := workflow.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return spec, nil
}

func workflowStartRun(ctx context.Context, opts *WorkflowStartOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var root *engine.Job
	n := len(opts.Spec.Operations)
	e := engine.EventAppendParams{Verb: engine.EventWorkflowStart,
		Detail: fmt.Sprintf("%s: %d %s", opts.Spec.Name, n, plural(n, "operation", "operations"))}
	err = engine.Recorded(ctx, store, opts.Audit.actor(), e, func(tx engine.TxStore, e *engine.EventAppendParams) error {
		var err error
		if root, err = workflow.Start(ctx, tx, opts.Spec, opts.Creator); err != nil {
			return err
		}
		e.JobIDs = []int64{root.ID}
		return nil
	})
	if err != nil {
		return err
	}
	ios := opts.IO
	if opts.Output.Format == formatJSON {
		w, err := workflow.Get(ctx, store, root.ID)
		if err != nil {
			return err
		}
		if err := writeJSON(ios.Out, w.View()); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(ios.Out, root.ID)
	}
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return nil // started; the hint below is only a courtesy
	}
	warned := map[string]bool{}
	for i, op := range opts.Spec.Operations {
		if _, offered := engine.ServiceDefaults(nodes, op.Type); !offered && !warned[op.Type] {
			warned[op.Type] = true
			fmt.Fprintf(ios.ErrOut, "no registered node offers type %s: operation %d '%s' will wait until one does\n",
				op.Type, i+1, op.Name)
		}
	}
	if ios.OutIsTerminal && opts.Output.Format != formatJSON {
		n := len(opts.Spec.Operations)
		fmt.Fprintf(ios.ErrOut, "started workflow %d '%s' of %d %s; follow it with 'jobctl workflow show %d'\n",
			root.ID, opts.Spec.Name, n, plural(n, "operation", "operations"), root.ID)
	}
	return nil
}

// WorkflowListOptions are the parsed flags of `jobctl workflow list`.
type WorkflowListOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Limit  int
	Output outputOptions
}

// NewCmdWorkflowList builds `jobctl workflow list`. runF replaces the
// action in tests.
func NewCmdWorkflowList(f *Factory, runF func(context.Context, *WorkflowListOptions) error) *cobra.Command {
	opts := &WorkflowListOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List workflows, newest first",
		Long: `List the workflows, newest first, with the state read from their jobs, how
many operations have ended, and the operation running or next. -o wide adds
the reason for the state and the creator.

-o json prints an array of objects as 'jobctl workflow show -o json' prints
them. -q prints the workflows' ids.`,
		Example: `  # the newest workflows
  jobctl workflow list

  # the ids of the running ones
  jobctl workflow list -o json | jq '.[] | select(.state == "RUNNING") | .id'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return usageErrorf(cmd, "invalid --limit %d: must not be negative", opts.Limit)
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return workflowListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", defaultWorkflowLimit, "show at most this many of the newest workflows (0: all)")
	_ = cmd.RegisterFlagCompletionFunc("limit", cobra.NoFileCompletions)
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	cmd.Flags().Lookup("quiet").Usage = "print only the workflows' ids, one per line"
	return cmd
}

func workflowListRun(ctx context.Context, opts *WorkflowListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	ws, err := workflow.List(ctx, store, opts.Limit)
	if err != nil {
		return err
	}
	ios := opts.IO
	views := make([]workflow.View, len(ws))
	for i, w := range ws {
		views[i] = w.View()
	}
	switch {
	case opts.Output.Quiet:
		for _, v := range views {
			fmt.Fprintln(ios.Out, v.ID)
		}
		return nil
	case opts.Output.Format == formatJSON:
		return writeJSON(ios.Out, views)
	}
	if len(views) == 0 && ios.OutIsTerminal {
		fmt.Fprintln(ios.ErrOut, "no workflows; start one with 'jobctl workflow start FILE'")
		return nil
	}
	now, err := store.Now(ctx)
	if err != nil {
		return err
	}
	p := newPalette(ios)
	header := []string{"ID", "NAME", "STATE", "DONE", "CURRENT", "AGE"}
	if opts.Output.wide() {
		header = append(header, "REASON", "CREATOR")
	}
	t := newTable(ios, header...)
	for _, v := range views {
		current := ""
		if v.Current > 0 {
			current = fmt.Sprintf("%d %s", v.Current, v.Operations[v.Current-1].Name)
		}
		cells := []string{strconv.FormatInt(v.ID, 10), v.Name, statusCell(p, v.State),
			fmt.Sprintf("%d/%d", v.Done, v.Total), current, timeCell(ios, now, &v.CreatedAt)}
		if opts.Output.wide() {
			cells = append(cells, v.Reason, v.Creator)
		}
		t.addRow(cells...)
	}
	return t.render()
}

// WorkflowShowOptions are the parsed flags of `jobctl workflow show`.
type WorkflowShowOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	ID     int64
	Output outputOptions
}

// NewCmdWorkflowShow builds `jobctl workflow show`. runF replaces the
// action in tests.
func NewCmdWorkflowShow(f *Factory, runF func(context.Context, *WorkflowShowOptions) error) *cobra.Command {
	opts := &WorkflowShowOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		ValidArgsFunction: completeWorkflowIDs(f),
		Use:               "show ID",
		Short:             "Show a workflow's operations and steps",
		Long: `Show one workflow: its state and why, then each operation with its job id,
type, on_failure, status, attempt and times (an operation not reached yet
has no job), then the step jobs. -o wide adds each job's node and message.
Piped, every line starts with what it is (a key of the header block, op or
step), tab-separated.

-o json prints an object with the stable fields id, name, state, reason,
current, done, total, creator, created_at, finished_at, operations (index,
name, type, on_failure, job_id, status, node, attempt, exit_code, message,
created_at, started_at, finished_at; job_id null and status empty while
the job is not created) and steps (step, job_id, status, node, message,
created_at, started_at, finished_at). -q prints the operations' job ids.

Exit status: 0 when shown; 3 when ID is no workflow.`,
		Example: `  # how far has workflow 42 come?
  jobctl workflow show 42

  # the log of every operation
  jobctl workflow show 42 -q | xargs -n1 jobctl logs

  # in a script: did it succeed?
  jobctl workflow show 42 -o json | jq -r .state`,
		Args: exactArgs(1, "a workflow id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseWorkflowID(cmd, args[0])
			if err != nil {
				return err
			}
			opts.ID = id
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return workflowShowRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	cmd.Flags().Lookup("quiet").Usage = "print only the operations' job ids, one per line"
	return cmd
}

func parseWorkflowID(cmd *cobra.Command, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf(cmd, "invalid workflow id %q: ids are positive whole numbers, as 'jobctl workflow list' shows", s)
	}
	return id, nil
}

func workflowShowRun(ctx context.Context, opts *WorkflowShowOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	w, err := workflow.Get(ctx, store, opts.ID)
	if err != nil {
		return err
	}
	v := w.View()
	ios := opts.IO
	switch {
	case opts.Output.Quiet:
		for _, op := range v.Operations {
			if op.JobID != nil {
				fmt.Fprintln(ios.Out, *op.JobID)
			}
		}
		return nil
	case opts.Output.Format == formatJSON:
		return writeJSON(ios.Out, v)
	}
	now, err := store.Now(ctx)
	if err != nil {
		return err
	}
	return printWorkflow(ios, opts.Output, now, v)
}

// printWorkflow shows a workflow: the header block, the operations and
// the steps.
func printWorkflow(ios *IOStreams, o outputOptions, now time.Time, v workflow.View) error {
	p := newPalette(ios)
	kv := &keyValues{ios: ios}
	kv.add("workflow", strconv.FormatInt(v.ID, 10))
	kv.add("name", v.Name)
	kv.add("state", statusCell(p, v.State))
	kv.add("reason", v.Reason)
	kv.add("operations", fmt.Sprintf("%d of %d ended", v.Done, v.Total))
	kv.add("creator", v.Creator)
	kv.add("created", timeValue(ios, now, &v.CreatedAt))
	if v.FinishedAt != nil {
		kv.add("finished", timeValue(ios, now, v.FinishedAt))
	}
	if len(v.Others) > 0 {
		ids := make([]string, len(v.Others))
		for i, id := range v.Others {
			ids[i] = strconv.FormatInt(id, 10)
		}
		kv.add("other children", strings.Join(ids, " "))
	}
	if err := kv.render(); err != nil {
		return err
	}
	piped := !ios.OutIsTerminal
	row := func(t *table, kind string, cells ...string) {
		if piped {
			cells = append([]string{kind}, cells...)
		}
		t.addRow(cells...)
	}
	header := func(cells ...string) *table {
		if piped {
			return newTable(ios)
		}
		fmt.Fprintln(ios.Out)
		if o.wide() {
			cells = append(cells, "NODE", "MESSAGE")
		}
		return newTable(ios, cells...)
	}
	ops := header("#", "OPERATION", "TYPE", "ON FAILURE", "JOB", "STATUS", "ATTEMPT", "STARTED", "FINISHED")
	for _, op := range v.Operations {
		job, status, attempt := "", p.gray("not created"), ""
		if op.JobID != nil {
			job, status, attempt = strconv.FormatInt(*op.JobID, 10), statusCell(p, op.Status), strconv.Itoa(op.Attempt)
		}
		if piped && op.JobID == nil {
			status = ""
		}
		cells := []string{strconv.Itoa(op.Index), op.Name, op.Type, op.OnFailure, job, status, attempt,
			timeCell(ios, now, op.StartedAt), timeCell(ios, now, op.FinishedAt)}
		if o.wide() || piped {
			cells = append(cells, op.Node, op.Message)
		}
		row(ops, "op", cells...)
	}
	if err := ops.render(); err != nil {
		return err
	}
	steps := header("STEP", "JOB", "STATUS", "CREATED", "STARTED", "FINISHED")
	for _, s := range v.Steps {
		cells := []string{strconv.Itoa(s.Step), strconv.FormatInt(s.JobID, 10), statusCell(p, s.Status),
			timeCell(ios, now, &s.CreatedAt), timeCell(ios, now, s.StartedAt), timeCell(ios, now, s.FinishedAt)}
		if o.wide() || piped {
			cells = append(cells, s.Node, s.Message)
		}
		row(steps, "step", cells...)
	}
	return steps.render()
}

// WorkflowCancelOptions are the parsed flags of `jobctl workflow cancel`.
type WorkflowCancelOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	IDs    []int64
	Output outputOptions
	Audit  auditOptions
}

// NewCmdWorkflowCancel builds `jobctl workflow cancel`. runF replaces the
// action in tests.
func NewCmdWorkflowCancel(f *Factory, runF func(context.Context, *WorkflowCancelOptions) error) *cobra.Command {
	opts := &WorkflowCancelOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		ValidArgsFunction: completeWorkflowIDs(f),
		Use:               "cancel ID...",
		Short:             "Cancel workflows",
		Long: `Cancel every job of each workflow that has not ended, as 'jobctl cancel' does
(a running operation is stopped on its node, and its own children with
it), steps first, so no further operation is created. The workflow then
reads CANCELLED. A workflow that has ended is left as it is.

Piped, the ids of the jobs cancelled are printed, one per line; -o json
prints the workflows as 'jobctl workflow show -o json' does.

Exit status: 0 when done; 3 when an ID is no workflow (the others are
cancelled all the same); 1 when a job could not be cancelled.`,
		Example: `  # stop workflow 42
  jobctl workflow cancel 42

  # stop every running workflow
  jobctl workflow list -o json | jq '.[] | select(.state == "RUNNING") | .id' | xargs -r jobctl workflow cancel`,
		Args: minArgs(1, "a workflow id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				id, err := parseWorkflowID(cmd, a)
				if err != nil {
					return err
				}
				opts.IDs = append(opts.IDs, id)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return workflowCancelRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

func workflowCancelRun(ctx context.Context, opts *WorkflowCancelOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	ios := opts.IO
	var errs []error
	views := []workflow.View{}
	for _, id := range opts.IDs {
		ids, err := workflow.Cancel(ctx, store, id, opts.Audit.actor())
		if err != nil {
			errs = append(errs, err)
			if errors.Is(err, engine.ErrNotFound) {
				continue
			}
		}
		w, gerr := workflow.Get(ctx, store, id)
		if gerr != nil {
			errs = append(errs, gerr)
			continue
		}
		v := w.View()
		views = append(views, v)
		switch {
		case opts.Output.Format == formatJSON:
		case !ios.OutIsTerminal:
			for _, j := range ids {
				fmt.Fprintln(ios.Out, j)
			}
		case len(ids) == 0:
			fmt.Fprintf(ios.Out, "workflow %d is %s; nothing to cancel\n", id, v.State)
		default:
			fmt.Fprintf(ios.Out, "cancelled workflow %d: %d %s\n", id, len(ids), plural(len(ids), "job", "jobs"))
		}
	}
	if opts.Output.Format == formatJSON {
		if err := writeJSON(ios.Out, views); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// completeWorkflowIDs offers the newest workflows' ids.
func completeWorkflowIDs(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, store, err := completionStore(cmd, f)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		ws, err := workflow.List(ctx, store, completionLimit)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		out := make([]cobra.Completion, len(ws))
		for i, w := range ws {
			out[i] = cobra.CompletionWithDesc(strconv.FormatInt(w.Root.ID, 10), w.Spec.Name+" "+string(w.Derive().Status))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

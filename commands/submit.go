package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/spf13/cobra"
)

// SubmitOptions are the parsed flags of `jobctl submit`.
type SubmitOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Type        string
	Operation   string
	Args        []string
	Load        *float64       // nil: the service's default, else 1
	Priority    int            // 0: a child's parent's, else engine.DefaultPriority
	RunTimeout  *time.Duration // nil: the service's default, else engine.DefaultJobTimeout
	Memory      *int64         // memory limit in bytes; nil: the service's, else none
	Key         string
	ParentID    *int64
	MaxAttempts int
	Backoff     time.Duration
	// Rollback is the command line run as its own job after the job's
	// final failure; RollbackType its type ("" the job's own).
	Rollback     string
	RollbackType string
	At           *time.Time     // run no earlier than this
	In           *time.Duration // run no earlier than this long after now on the database clock
	Hold         bool
	Payload      json.RawMessage
	Creator      string

	Wait        bool
	WaitTimeout time.Duration // 0: no limit
	// Strict refuses a job no node can ever run, or one above every
	// node's max load, where submit would only warn.
	Strict bool

	// Job is the job this submit runs in; viaNode: the new job is its
	// child, created through its node, which is a job's only way to the
	// cluster.
	Job     JobEnv
	viaNode bool

	// Batch holds the jobs of --batch, each line's fields over the
	// flags above; nil without --batch.
	Batch  *batchJobs
	Output outputOptions
	Audit  auditOptions
}

// NewCmdSubmit builds `jobctl submit`. runF replaces the action in tests.
func NewCmdSubmit(f *Factory, runF func(context.Context, *SubmitOptions) error) *cobra.Command {
	opts := &SubmitOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Audit: newAudit(f)}
	var atText, payloadText, batchPath string
	var child bool
	var timeout, runTimeout, waitTimeout, in time.Duration
	var load float64
	var memory int64

	cmd := &cobra.Command{
		Use:   "submit [flags] [-- ARGS...]",
		Short: "Submit a job and print its id",
		Long: `Submit a job and print its id on the first line of stdout.

With ARGS the job runs that command on a node started with --exec (type
"exec"); with --type it runs that service, which gets ARGS appended to its
own command line. The payload is given to the job as JSON on stdin.

Unless given, the load and the run limit (--run-timeout) come from the
service's settings on a registered node, else 1 and 8h.

--priority (1 to 100, default 50; a child takes its parent's) orders the
queue: a node's room goes to RESTART jobs first, then to the higher
priority, then to the older job. A key keeps its own order whatever its
jobs' priorities: an urgent job waits behind an earlier job of its key.

With --wait, submit waits like 'jobctl wait' and exits 4 when the job ends
FAILED, CANCELLED or DELETED, or 5 when --timeout passes first (the job
goes on); stdout still
holds only the id, the final status goes to stderr. On a terminal stderr
shows the job's progress while it runs, or why it still waits for a node,
and ends with one readable line, such as "job 42 FINISHED in 3.2s (exit 0)".

Submit warns on stderr when, as the nodes are registered now, no node
offers the job's type, none can ever run it (those offering it are all
offline or in maintenance, or its load is above their max load and they
decline such jobs), or its load is above every node's max load (it will run
alone on one of the largest nodes, which takes no other job until then).
The job is created all the same, as nodes may come; --strict refuses it
instead: exit 2 and nothing created (with --batch, the first such line
refuses the whole batch).

--timeout bounds the wait, as on every command that waits; the job's own
run limit is --run-timeout. Written without --wait, --timeout still sets
the run limit, as it did before, with a warning: that spelling is
deprecated.

With --batch FILE (- for stdin) submit creates many jobs at once: each line
of FILE is one JSON object with any of the fields type, operation, args (a
list of strings), payload (any JSON), load, priority, key, parent_id,
max_attempts, backoff, run_timeout, in (durations as strings, like "90s"),
memory (a size as a string, like "2GiB"), hold, rollback and rollback_type
("timeout", the old name of run_timeout, still works, with a warning). A
field a line leaves out takes the value of its flag on the command line
(ARGS after -- for args; a line's "in" replaces --at). Blank lines are
skipped. Every line is checked before any job is created, so a bad line
creates nothing and exits 2 naming it. The jobs go in in chunks of 1000,
one transaction each; should the database fail part-way, the ids of the
jobs already created are printed before the error. The ids are printed one
per line in the order of the lines.

--memory SIZE (512MiB, 2GiB, 1.5GiB, 500MB; 0 for none) is the most
memory the job's processes may hold together, enforced as a hard limit,
without swap, on a node started with --enforce; the job is killed when it
goes over and ends with "killed: out of memory, limit 2GiB". Without it the
job takes its service's memory (serve --config), else none. A node without
--enforce runs it unlimited, and every node measures what it uses ('jobctl
help usage').

--rollback COMMAND is run once, as its own job, after the job's final
failure: when it ends FAILED with no attempts left (not when it is
cancelled; a failure with attempts left is retried first). COMMAND is split
into words as a shell would split them, quotes and backslashes included,
but never run by a shell: no variables, no ; or |. The rollback job has the
type --rollback-type (default: the job's own), the job's key, its place in
the key's order and its load, and one attempt; later jobs of the key wait
until it has run. A rollback that fails is a double fault: 'jobctl show'
says so and 'jobctl list --double-fault' finds them.

Inside a job, --child (or --parent $JOBCTL_JOB_ID) makes the new job a
child of that job. A job has no database: its node creates the child, and
--batch and --wait do not work there; wait for the children with 'jobctl
wait --children' ('jobctl help job-protocol').

--at takes RFC 3339 (2030-01-02T15:04:05Z), a date or a date and time in
the local zone (2030-12-24, "2030-12-24 08:00"), a clock time HH:MM in the
local zone (the next one: tomorrow when it has passed today) or an offset
from now (+10m, +1d). A time in the past starts the job at once.

-o json prints a JSON array of the new jobs as 'jobctl show -o json' prints
them, so .[0].id is the id.`,
		Example: `  # run a command on any node that allows exec
  jobctl submit -- ./backup.sh --full

  # a service job with a payload, retried up to 3 times
  jobctl submit --type encode --load 2 --max-attempts 3 --payload '{"file":"a.mp4"}'

  # an urgent job: placed before every queued job of a lower priority
  jobctl submit --priority 90 -- ./rotate-keys.sh

  # two cores' share and at most 2 GiB of memory, on a node with --enforce
  jobctl submit --load 2 --memory 2GiB -- ./transcode.sh in.mp4

  # payload from a file; jobs with the same key run one at a time
  jobctl submit --type deploy --key web --payload @deploy.json

  # hold the job until 'jobctl release', or start it in an hour
  jobctl submit --hold -- make release
  jobctl submit --in 1h -- make report

  # start it at the next 02:30 local time, on a date, or ten minutes from now
  jobctl submit --at 02:30 -- make backup
  jobctl submit --at 2030-12-24 -- make report
  jobctl submit --at +10m -- make report

  # inside a job: a child of that job
  jobctl submit --child -- ./step.sh 2

  # a deploy that undoes itself when its last attempt fails; web's next job waits for the undo
  jobctl submit --key web --max-attempts 3 --rollback './undeploy.sh --to "last good"' -- ./deploy.sh v2

  # the rollback as a job of another service
  jobctl submit --type deploy --key web --rollback 'v1' --rollback-type undeploy

  # refuse (exit 2) a job no node could run, rather than queue it with a warning
  jobctl submit --strict --type encode --load 16

  # submit and wait for the result (exit 4 when it fails, 5 when not done in 10 minutes)
  jobctl submit --wait --timeout 10m -- make test

  # a job that is cancelled when it runs longer than an hour
  jobctl submit --run-timeout 1h -- ./backup.sh

  # many jobs at once, one JSON object a line; flags fill in what a line leaves out
  printf '%s\n' '{"payload":{"file":"a.mp4"}}' '{"payload":{"file":"b.mp4"},"load":4}' |
    jobctl submit --batch - --type encode --max-attempts 3`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Only what follows -- is the job's command: a word before it
			// is more likely a mistyped flag value than a command to run.
			if dash := cmd.ArgsLenAtDash(); len(args) > 0 && dash != 0 {
				return usageErrorf(cmd, "unexpected argument %q: give the job's command after --, as in 'jobctl submit [flags] -- ARGS'", args[0])
			}
			opts.Args = args
			opts.Type = strings.TrimSpace(opts.Type)
			batch := cmd.Flags().Changed("batch")
			switch {
			case batch:
				// Each line names its type or takes --type; see parseBatchLine.
			case opts.Type == "" && len(args) == 0:
				return usageErrorf(cmd, "nothing to submit: give --type TYPE or a command after --")
			case opts.Type == "":
				opts.Type = engine.TypeExec
			case opts.Type == engine.TypeExec && len(args) == 0:
				return usageErrorf(cmd, "an exec job needs a command: give it after --")
			}
			if cmd.Flags().Changed("load") {
				opts.Load = &load
			}
			if cmd.Flags().Changed("memory") {
				opts.Memory = &memory
			}
			if err := opts.timeouts(cmd, timeout, runTimeout, waitTimeout); err != nil {
				return err
			}
			if opts.MaxAttempts < 1 {
				return usageErrorf(cmd, "invalid --max-attempts %d: must be at least 1", opts.MaxAttempts)
			}
			if opts.Backoff < 0 {
				return usageErrorf(cmd, "invalid --backoff %s: must not be negative", opts.Backoff)
			}
			if cmd.Flags().Changed("parent") {
				parent, _ := cmd.Flags().GetInt64("parent")
				if parent <= 0 {
					return usageErrorf(cmd, "invalid --parent %d: job ids are positive", parent)
				}
				opts.ParentID = &parent
			}
			if err := opts.childOf(cmd, f.job(), child); err != nil {
				return err
			}
			if cmd.Flags().Changed("at") && cmd.Flags().Changed("in") {
				return usageErrorf(cmd, "--at and --in both set the start time; give one")
			}
			if cmd.Flags().Changed("at") {
				at, err := parseTimeSpec(atText, opts.Clock.Now(), opts.IO.Zone(), towardFuture)
				if err != nil {
					return usageErrorf(cmd, "invalid --at %q: want %s", atText, futureTimeForms)
				}
				opts.At = &at
			}
			if cmd.Flags().Changed("in") {
				if in < 0 {
					return usageErrorf(cmd, "invalid --in %s: must not be negative", in)
				}
				opts.In = &in
			}
			if opts.Hold && opts.Wait {
				return usageErrorf(cmd, "--wait with --hold would wait until someone releases the job; submit held, then 'jobctl release' and 'jobctl wait'")
			}
			if err := checkRollbackFlags(cmd, opts); err != nil {
				return err
			}
			if cmd.Flags().Changed("payload") {
				p, err := readPayload(payloadText, opts.IO.In)
				if err != nil {
					return usageErrorf(cmd, "invalid --payload: %v", err)
				}
				opts.Payload = p
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			opts.Creator = creator()
			if batch && opts.viaNode {
				return usageErrorf(cmd, "--batch does not work inside a job; submit its children one at a time")
			}
			if opts.Wait && opts.viaNode {
				return usageErrorf(cmd, "--wait does not work inside a job; wait for its children with 'jobctl wait --children'")
			}
			if opts.Audit.Reason != "" && opts.viaNode {
				return usageErrorf(cmd, "--reason does not work inside a job: its node records the job itself as who submitted the child")
			}
			if opts.Strict && opts.viaNode {
				return usageErrorf(cmd, "--strict does not work inside a job, which cannot see the nodes; its node warns of a type no node offers")
			}
			if batch {
				switch {
				case batchPath == "":
					return usageErrorf(cmd, "--batch needs a file, or - for stdin")
				case opts.Wait:
					return usageErrorf(cmd, "--wait cannot be combined with --batch; wait for the printed ids with 'jobctl wait'")
				case batchPath == "-" && payloadText == "-" && cmd.Flags().Changed("payload"):
					return usageErrorf(cmd, "--batch - and --payload - both read stdin; give one of them a file")
				}
				jobs, err := readBatch(batchPath, opts.IO.In, opts)
				if err != nil {
					return usageErrorf(cmd, "--batch %s: %v", batchPath, err)
				}
				if jobs.OldTimeout > 0 {
					fmt.Fprintf(opts.IO.ErrOut, "jobctl: warning: --batch %s: line %d: \"timeout\" is deprecated; name the run limit \"run_timeout\"\n",
						batchPath, jobs.OldTimeout)
				}
				opts.Batch = &jobs
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return submitRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Type, "type", "", "job type (service) to run; exec when a command follows --")
	fl.StringVar(&opts.Operation, "operation", "", "operation name, shown in listings")
	fl.Var((*loadValue)(&load), "load", "load the job puts on its node (default: the service's, else 1)")
	fl.Var((*priorityValue)(&opts.Priority), "priority", "dispatch order among queued jobs, 1 to 100, higher first (default 50; a child: its parent's)")
	fl.StringVar(&opts.Key, "key", "", "jobs with the same key run one at a time, in submission order")
	fl.Int64("parent", 0, "id of the parent job")
	fl.BoolVar(&child, "child", false, "make the job a child of the job this runs in (only inside a job)")
	fl.IntVar(&opts.MaxAttempts, "max-attempts", 1, "how often the job is tried before it fails")
	fl.DurationVar(&opts.Backoff, "backoff", 10*time.Second, "wait before the first retry; doubles with each further one")
	fl.DurationVar(&runTimeout, "run-timeout", 0, "cancel the job after running this long (default: the service's, else 8h)")
	fl.Var((*memoryValue)(&memory), "memory", "hard memory limit of the job's processes on a node with --enforce, e.g. 512MiB or 2GiB; 0 for none (default: the service's)")
	fl.StringVar(&atText, "at", "", "do not start before this `TIME`: RFC 3339, a date (2030-01-02), HH:MM (the next one) or +10m")
	fl.DurationVar(&in, "in", 0, "do not start before this long from now")
	fl.BoolVar(&opts.Hold, "hold", false, "create the job held (INSTANTIATED) until 'jobctl release'")
	fl.StringVar(&payloadText, "payload", "", "JSON payload, @FILE to read it from a file, or - for stdin")
	fl.BoolVar(&opts.Wait, "wait", false, "wait until the job ends; exit 4 if it fails")
	fl.DurationVar(&timeout, "timeout", 0, "with --wait, give up waiting after this long (exit 5); the job goes on")
	// The spellings of before --timeout bounded the wait: see timeouts.
	fl.DurationVar(&waitTimeout, "wait-timeout", 0, "with --wait, give up after this long (exit 5)")
	_ = fl.MarkHidden("wait-timeout")
	fl.StringVar(&opts.Rollback, "rollback", "", "after the job's final failure run this `COMMAND` line once, as its own job, before the key moves on")
	fl.StringVar(&opts.RollbackType, "rollback-type", "", "job `TYPE` of the rollback job (default: the job's own type)")
	fl.BoolVar(&opts.Strict, "strict", false, "refuse (exit 2, nothing created) a job no node can run as the cluster is now, or one above every node's max load")
	fl.StringVar(&batchPath, "batch", "", "submit a job per line of `FILE`, each a JSON object (- for stdin); flags fill in what a line leaves out")
	addReasonFlag(cmd, &opts.Audit)
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes(f))
	_ = cmd.RegisterFlagCompletionFunc("rollback-type", completeTypes(f))
	addOutputFlags(cmd, &opts.Output, true)
	return cmd
}

// timeouts applies --timeout, which bounds the wait of --wait, and
// --run-timeout, the job's run limit. Two spellings of before still work,
// each with a warning: --wait-timeout for --timeout, and --timeout without
// --wait, which used to be the run limit and stays that where no wait can
// be meant.
func (opts *SubmitOptions) timeouts(cmd *cobra.Command, timeout, runTimeout, waitTimeout time.Duration) error {
	fl := cmd.Flags()
	timeoutSet, runSet := fl.Changed("timeout"), fl.Changed("run-timeout")
	warn := func(format string, a ...any) { fmt.Fprintf(opts.IO.ErrOut, "jobctl: warning: "+format+"\n", a...) }
	if fl.Changed("wait-timeout") {
		switch {
		case timeoutSet:
			return usageErrorf(cmd, "--wait-timeout is the old spelling of --timeout; give one of them")
		case !opts.Wait:
			return usageErrorf(cmd, "--wait-timeout needs --wait")
		}
		warn("--wait-timeout is deprecated; use --timeout, which bounds the wait of --wait")
		timeout, timeoutSet = waitTimeout, true
	}
	if timeoutSet && !opts.Wait {
		if runSet {
			return usageErrorf(cmd, "--timeout bounds the wait of --wait, and there is no --wait; the run limit is --run-timeout")
		}
		warn("--timeout without --wait sets the job's run limit, as it used to; that use is deprecated: write --run-timeout (--timeout bounds the wait of --wait)")
		runTimeout, runSet, timeoutSet = timeout, true, false
	}
	if timeoutSet {
		if timeout < 0 {
			return usageErrorf(cmd, "invalid --timeout %s: must not be negative", timeout)
		}
		opts.WaitTimeout = timeout
	}
	if runSet {
		if runTimeout <= 0 {
			return usageErrorf(cmd, "invalid --run-timeout %s: must be positive", runTimeout)
		}
		opts.RunTimeout = &runTimeout
	}
	return nil
}

// childOf applies --child, and --parent naming the job this runs in: the
// new job is that job's child, created through its node when the job has
// no database.
func (opts *SubmitOptions) childOf(cmd *cobra.Command, job JobEnv, child bool) error {
	opts.Job = job
	if child {
		switch {
		case !job.InJob():
			return usageErrorf(cmd, "--child works only inside a job, which its node gives $JOBCTL_JOB_ID; outside one use --parent ID")
		case opts.ParentID != nil && *opts.ParentID != job.ID:
			return usageErrorf(cmd, "--child makes job %d the parent, --parent names job %d; give one", job.ID, *opts.ParentID)
		}
		opts.ParentID = engine.Ptr(job.ID)
	}
	opts.viaNode = job.ViaNode() && opts.ParentID != nil && *opts.ParentID == job.ID
	return nil
}

// submitChildRun creates a child of the job this runs in through its node.
// With -o json it prints what it knows of the child: its id and parent.
func submitChildRun(ctx context.Context, opts *SubmitOptions) error {
	r := endpoint.ChildRequest{Type: opts.Type, Operation: opts.Operation, Args: opts.Args, Payload: opts.Payload,
		Load: opts.Load, Priority: opts.Priority, Key: opts.Key, MaxAttempts: opts.MaxAttempts, Backoff: opts.Backoff.String(),
		At: opts.At, Hold: opts.Hold, Rollback: opts.Rollback, RollbackType: opts.RollbackType}
	if opts.Memory != nil {
		r.Memory = strconv.FormatInt(*opts.Memory, 10)
	}
	if opts.RunTimeout != nil {
		r.Timeout = opts.RunTimeout.String()
	}
	if opts.In != nil {
		r.In = opts.In.String()
	}
	sub, err := opts.Job.Client().SubmitChild(ctx, r)
	if err != nil {
		return err
	}
	if !sub.Offered {
		fmt.Fprintf(opts.IO.ErrOut, "jobctl: warning: no registered node offers type %q; the job waits until one does\n", opts.Type)
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, []map[string]int64{{"id": sub.ID, "parent_id": opts.Job.ID}})
	}
	_, err = fmt.Fprintln(opts.IO.Out, sub.ID)
	return err
}

// loadValue is the --load flag: a finite, non-negative number, checked
// while flags are parsed so a bad load is a usage error.
type loadValue float64

func (v *loadValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *loadValue) Type() string   { return "number" }
func (v *loadValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil:
		return fmt.Errorf("not a number")
	case math.IsNaN(f) || math.IsInf(f, 0):
		return fmt.Errorf("must be a finite number")
	case f < 0:
		return fmt.Errorf("must not be negative")
	}
	*v = loadValue(f)
	return nil
}

// memoryValue is --memory: a size such as 512MiB or 2GiB, or 0 for none.
type memoryValue int64

func (v *memoryValue) String() string {
	if *v == 0 {
		return "0"
	}
	return engine.FormatSize(int64(*v))
}
func (v *memoryValue) Type() string { return "size" }
func (v *memoryValue) Set(s string) error {
	limit, err := engine.ParseMemoryLimit(s)
	if err != nil {
		return err
	}
	*v = memoryValue(limit)
	return nil
}

// priorityValue is a --priority flag: a whole number from
// engine.MinPriority to engine.MaxPriority, checked while flags are parsed
// so a bad priority is a usage error.
type priorityValue int

func (v *priorityValue) String() string {
	if *v == 0 {
		return "" // unset: each command says what stands in
	}
	return strconv.Itoa(int(*v))
}
func (v *priorityValue) Type() string { return "1-100" }
func (v *priorityValue) Set(s string) error {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	switch {
	case err != nil:
		return fmt.Errorf("not a whole number")
	case p < engine.MinPriority || p > engine.MaxPriority:
		return fmt.Errorf("must be between %d and %d", engine.MinPriority, engine.MaxPriority)
	}
	*v = priorityValue(p)
	return nil
}

// readPayload reads --payload: inline JSON, @FILE, or - for stdin.
func readPayload(arg string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	switch {
	case arg == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		data = b
	case strings.HasPrefix(arg, "@"):
		b, err := os.ReadFile(arg[1:])
		if err != nil {
			return nil, err
		}
		data = b
	default:
		data = []byte(arg)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("not valid JSON")
	}
	return json.RawMessage(strings.TrimSpace(string(data))), nil
}

// creator names who submits: $USER@hostname.
func creator() string {
	name := os.Getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

func submitRun(ctx context.Context, opts *SubmitOptions) error {
	if opts.viaNode {
		return submitChildRun(ctx, opts)
	}
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	if opts.Batch != nil {
		nodes, err := store.NodeList(ctx)
		if err != nil {
			return err
		}
		return submitBatchRun(ctx, opts, store, nodes, newRunnableCheck(nodes, opts.Strict))
	}
	// A plain submit is one statement: the store fills in the service's
	// defaults as it inserts the job, records the event, and says what the
	// nodes offer the job's type, which is all the check needs for a job
	// that fits. --strict must judge the job before anything is written,
	// so it reads the nodes first.
	var nodes []*engine.Node
	var check *runnableCheck
	if opts.Strict {
		if nodes, err = store.NodeList(ctx); err != nil {
			return err
		}
		check = newRunnableCheck(nodes, true)
	}
	req := engine.SubmitRequest{
		Type:         opts.Type,
		Operation:    opts.Operation,
		Args:         opts.Args,
		Payload:      opts.Payload,
		Load:         opts.Load,
		Priority:     opts.Priority,
		Timeout:      opts.RunTimeout,
		MemoryLimit:  opts.Memory,
		Hold:         opts.Hold,
		Key:          opts.Key,
		Rollback:     opts.Rollback,
		RollbackType: opts.RollbackType,
		ParentID:     opts.ParentID,
		MaxAttempts:  opts.MaxAttempts,
		Backoff:      opts.Backoff,
		RunAt:        opts.At,
		RunIn:        opts.In,
		Creator:      opts.Creator,
	}
	if check != nil {
		req.Check = func(p *engine.JobInsertParams) error { return check.check(p, 0) }
	}
	sub, err := engine.SubmitOne(ctx, store, nodes, req, opts.Audit.actor())
	if err != nil {
		return err
	}
	if check == nil && !surelyRunnable(sub, opts.Type) {
		// The job is in; what keeps it from running is told from the
		// nodes as they are.
		if nodes, err = store.NodeList(ctx); err != nil {
			return err
		}
		check = newRunnableCheck(nodes, false)
		_ = check.check(&engine.JobInsertParams{Type: strings.TrimSpace(opts.Type), Load: sub.Load}, 0)
	}
	if check != nil {
		check.warn(opts.IO.ErrOut, "")
	}
	if err := printSubmitted(ctx, opts, store, []int64{sub.ID}); err != nil {
		return err
	}
	if !opts.Wait {
		return nil
	}
	// stdout carries the id alone, so ID=$(jobctl submit --wait …) works;
	// the final status goes to stderr, for the person watching: a readable
	// line on a terminal, the status row of 'jobctl wait' otherwise.
	status := *opts.IO
	status.Out, status.OutIsTerminal = opts.IO.ErrOut, false
	return waitRun(ctx, &WaitOptions{
		IO: &status, Store: opts.Store, Clock: opts.Clock, IDs: []int64{sub.ID}, Timeout: opts.WaitTimeout,
		summary: opts.IO.ErrIsTerminal,
	})
}

// submitBatchRun creates the jobs of --batch and prints their ids. A line
// the engine refuses is a usage error naming the line; nothing is created.
func submitBatchRun(ctx context.Context, opts *SubmitOptions, store submitStore, nodes []*engine.Node, check *runnableCheck) error {
	for i := range opts.Batch.Requests {
		line := opts.Batch.Lines[i]
		opts.Batch.Requests[i].Check = func(p *engine.JobInsertParams) error { return check.check(p, line) }
	}
	sub, err := engine.SubmitMany(ctx, store, nodes, opts.Batch.Requests, opts.Audit.actor())
	var refused *engine.BatchError
	if errors.As(err, &refused) {
		return &UsageError{Err: fmt.Errorf("--batch %s: line %d: %w", opts.Batch.Path, opts.Batch.Lines[refused.Index], refused.Err), Command: "jobctl submit"}
	}
	check.warn(opts.IO.ErrOut, opts.Batch.Path)
	// The jobs created before a failure are printed too, so they can be
	// found and the rest submitted again.
	if perr := printSubmitted(ctx, opts, store, sub.IDs); err == nil {
		err = perr
	}
	return err
}

// printSubmitted prints the new ids one a line, or with -o json a JSON
// array of the new jobs.
func printSubmitted(ctx context.Context, opts *SubmitOptions, store jobReader, ids []int64) error {
	if opts.Output.Format == formatJSON {
		// The new jobs are, nearly always, this creator's newest: one read
		// finds them, and any another submit slipped in between is read
		// on its own.
		byID := map[int64]*engine.Job{}
		if len(ids) > 1 {
			recent, err := store.JobList(ctx, engine.JobListParams{Creator: opts.Creator, Limit: len(ids)})
			if err != nil {
				return err
			}
			for _, j := range recent {
				byID[j.ID] = j
			}
		}
		jobs := make([]*engine.Job, 0, len(ids))
		for _, id := range ids {
			j, ok := byID[id]
			if !ok {
				var err error
				if j, err = store.JobGet(ctx, id); err != nil {
					return err
				}
			}
			jobs = append(jobs, j)
		}
		return writeJSON(opts.IO.Out, jobs)
	}
	w := bufio.NewWriter(opts.IO.Out)
	for _, id := range ids {
		// A write error sticks in w and comes back from Flush.
		_, _ = w.WriteString(strconv.FormatInt(id, 10))
		_ = w.WriteByte('\n')
	}
	return w.Flush()
}

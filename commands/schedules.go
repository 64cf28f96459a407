package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/schedule"
	"github.com/spf13/cobra"
)

// NewCmdSchedules builds `jobctl schedules` and its subcommands; on its own
// it lists the schedules.
func NewCmdSchedules(f *Factory) *cobra.Command {
	list := NewCmdSchedulesList(f, nil)
	cmd := &cobra.Command{
		Use:     "schedules",
		Aliases: []string{"schedule"},
		Short:   "Create jobs on a cron schedule",
		Long: `A schedule is a named cron expression and a job: at each time the expression
names, the node that holds the dispatcher lease creates the job. The job is
created and the next fire time set in one transaction, so when the lease
moves to another node no fire is made twice or lost. Fires missed while no
node was up are made up by one job when one is back, not one per missed time.

'jobctl schedules' lists them (the same as 'jobctl schedules list').`,
		Example: `  # a report every night at 02:30 Berlin time
  jobctl schedules add nightly --cron '30 2 * * *' --tz Europe/Berlin -- make report

  # what is scheduled, and when it fires next
  jobctl schedules

  # hold it for a while, then let it go on
  jobctl schedules pause nightly
  jobctl schedules resume nightly`,
		Args: subcommandArgs,
		RunE: list.RunE,
	}
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(list, NewCmdSchedulesAdd(f, nil), NewCmdSchedulesShow(f, nil),
		NewCmdSchedulesSet(f, schedulePause, nil), NewCmdSchedulesSet(f, scheduleResume, nil),
		NewCmdSchedulesSet(f, scheduleRemove, nil))
	return cmd
}

// SchedulesAddOptions are the parsed flags of `jobctl schedules add`.
type SchedulesAddOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Params engine.ScheduleAddParams
	Output outputOptions
	Audit  auditOptions
}

// NewCmdSchedulesAdd builds `jobctl schedules add`. runF replaces the action in tests.
func NewCmdSchedulesAdd(f *Factory, runF func(context.Context, *SchedulesAddOptions) error) *cobra.Command {
	opts := &SchedulesAddOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store}
	var overlap, payloadText string
	var timeout, oldTimeout time.Duration
	var load float64
	var memory int64
	tpl := &opts.Params.Job
	cmd := &cobra.Command{
		Use:   "add NAME --cron EXPR [flags] [-- ARGS...]",
		Short: "Add a schedule",
		Long: `Add a schedule NAME that creates a job at each time the cron expression names.

--cron takes five fields (minute, hour, day of month, month, day of week, as
in crontab) or a descriptor: @yearly, @monthly, @weekly, @daily, @hourly, or
@every DURATION (such as @every 90s; whole seconds, at least 1s: anything
shorter is refused). The fields
are read in the zone of --tz (an IANA name; default UTC, the same on every
node): a time that does not exist on a day because the clocks go forward
does not fire that day, and a time of day that comes twice because they go
back fires once, at its first coming; with * as the hour (hourly, every few
minutes) a schedule fires through the repeated hour too, by the clock.

The job is given as to 'jobctl submit': with ARGS after -- it runs that
command on a node started with --exec (type "exec"); with --type it runs that
service. A load or run limit (--run-timeout) left out comes from the
service's settings when the job is created.

--overlap skip (the default) creates no job while the job of the last fire
has not ended: that fire is passed over and logged. --overlap allow creates
one at every fire. --rollback and --rollback-type give each job a rollback,
as 'jobctl submit' does.

The jobs a schedule creates have the creator "schedule:NAME". -o json prints
the new schedule as 'jobctl schedules show -o json' does.`,
		Example: `  # every night at 02:30 Berlin time
  jobctl schedules add nightly --cron '30 2 * * *' --tz Europe/Berlin -- make report

  # a service job every five minutes, even while the last one still runs
  jobctl schedules add poll --cron '*/5 * * * *' --type poll --overlap allow --payload '{"feed":"a"}'

  # every 30 seconds
  jobctl schedules add tick --cron '@every 30s' --type noop

  # a nightly migration, one at a time, undone when it fails
  jobctl schedules add migrate --cron '@daily' --key db --rollback './migrate down' -- ./migrate up`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			names := args
			if dash >= 0 {
				names, tpl.Args = args[:dash], args[dash:]
			}
			if len(names) != 1 {
				return usageErrorf(cmd, "give one schedule name, and the job's command after --, as in 'jobctl schedules add NAME --cron EXPR -- ARGS'")
			}
			p := &opts.Params
			p.Name = names[0]
			if !cmd.Flags().Changed("cron") {
				return usageErrorf(cmd, "--cron is required: five fields as in crontab, or a descriptor such as @hourly or @every 5m")
			}
			tpl.Type = strings.TrimSpace(tpl.Type)
			switch {
			case tpl.Type == "" && len(tpl.Args) == 0:
				return usageErrorf(cmd, "no job to schedule: give --type TYPE or a command after --")
			case tpl.Type == "":
				tpl.Type = engine.TypeExec
			case tpl.Type == engine.TypeExec && len(tpl.Args) == 0:
				return usageErrorf(cmd, "an exec job needs a command: give it after --")
			}
			switch engine.ScheduleOverlap(overlap) {
			case engine.OverlapSkip, engine.OverlapAllow:
				p.Overlap = engine.ScheduleOverlap(overlap)
			default:
				return usageErrorf(cmd, "invalid --overlap %q: must be skip or allow", overlap)
			}
			if _, err := schedule.Parse(p.Cron, p.TZ); err != nil {
				return usageErrorf(cmd, "%s", strings.TrimPrefix(err.Error(), "invalid schedule: "))
			}
			if cmd.Flags().Changed("load") {
				tpl.Load = &load
			}
			if cmd.Flags().Changed("memory") {
				tpl.Memory = &memory
			}
			runSet := cmd.Flags().Changed("run-timeout")
			if cmd.Flags().Changed("timeout") {
				// The run limit's old name: a schedule waits for nothing.
				if runSet {
					return usageErrorf(cmd, "--timeout is the old spelling of --run-timeout; give one of them")
				}
				fmt.Fprintln(opts.IO.ErrOut, "jobctl: warning: --timeout is deprecated here; the run limit is --run-timeout")
				timeout, runSet = oldTimeout, true
			}
			if runSet {
				if timeout <= 0 {
					return usageErrorf(cmd, "invalid --run-timeout %s: must be positive", timeout)
				}
				tpl.Timeout = engine.Ptr(engine.Duration(timeout))
			}
			if tpl.MaxAttempts < 1 {
				return usageErrorf(cmd, "invalid --max-attempts %d: must be at least 1", tpl.MaxAttempts)
			}
			if tpl.Backoff < 0 {
				return usageErrorf(cmd, "invalid --backoff %s: must not be negative", time.Duration(tpl.Backoff))
			}
			if err := checkRollback(cmd, tpl.Rollback, &tpl.RollbackType); err != nil {
				return err
			}
			if cmd.Flags().Changed("payload") {
				payload, err := readPayload(payloadText, opts.IO.In)
				if err != nil {
					return usageErrorf(cmd, "invalid --payload: %v", err)
				}
				tpl.Payload = payload
			}
			p.Creator = creator()
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return schedulesAddRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Params.Cron, "cron", "", "when to fire: five crontab fields, or @hourly, @daily, @every 5m …")
	fl.StringVar(&opts.Params.TZ, "tz", schedule.DefaultTZ, "IANA time zone the cron fields are read in")
	fl.StringVar(&overlap, "overlap", string(engine.OverlapSkip), "while the last job has not ended: skip the fire, or allow another job")
	fl.StringVar(&tpl.Type, "type", "", "job type (service) to run; exec when a command follows --")
	fl.StringVar(&tpl.Operation, "operation", "", "operation name, shown in listings")
	fl.Var((*loadValue)(&load), "load", "load the job puts on its node (default: the service's, else 1)")
	fl.Var((*priorityValue)(&tpl.Priority), "priority", "dispatch order of each job among queued ones, 1 to 100, higher first (default 50)")
	fl.StringVar(&tpl.Key, "key", "", "jobs with the same key run one at a time, in submission order")
	fl.IntVar(&tpl.MaxAttempts, "max-attempts", 1, "how often each job is tried before it fails")
	fl.Var((*durationValue)(&tpl.Backoff), "backoff", "wait before the first retry; doubles with each further one")
	fl.DurationVar(&timeout, "run-timeout", 0, "cancel a job after running this long (default: the service's, else 8h)")
	fl.DurationVar(&oldTimeout, "timeout", 0, "the old spelling of --run-timeout")
	_ = fl.MarkHidden("timeout")
	fl.Var((*memoryValue)(&memory), "memory", "hard memory limit of each job's processes on a node with --enforce, e.g. 512MiB; 0 for none (default: the service's)")
	fl.StringVar(&payloadText, "payload", "", "JSON payload, @FILE to read it from a file, or - for stdin")
	fl.StringVar(&tpl.Rollback, "rollback", "", "after a job's final failure run this `COMMAND` line once, as its own job, before its key moves on")
	fl.StringVar(&tpl.RollbackType, "rollback-type", "", "type of the rollback job (default: the job's own)")
	tpl.Backoff = engine.Duration(10 * time.Second)
	_ = cmd.RegisterFlagCompletionFunc("type", completeTypes(f))
	_ = cmd.RegisterFlagCompletionFunc("rollback-type", completeTypes(f))
	addOutputFlags(cmd, &opts.Output, false)
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

// durationValue is a flag holding an engine.Duration.
type durationValue engine.Duration

func (v *durationValue) String() string { return time.Duration(*v).String() }
func (v *durationValue) Type() string   { return "duration" }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration such as 30s or 5m")
	}
	*v = durationValue(d)
	return nil
}

func schedulesAddRun(ctx context.Context, opts *SchedulesAddOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var sc *engine.Schedule
	p := opts.Params
	e := engine.EventAppendParams{Verb: engine.EventSchedulesAdd, Schedule: p.Name, Detail: fmt.Sprintf("%s (%s)", p.Cron, p.TZ)}
	err = engine.Recorded(ctx, store, opts.Audit.actor(), e, func(tx engine.TxStore, _ *engine.EventAppendParams) error {
		var err error
		sc, err = schedule.Add(ctx, tx, p)
		return err
	})
	if err != nil {
		return err
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, sc)
	}
	if opts.IO.OutIsTerminal {
		_, err = fmt.Fprintf(opts.IO.Out, "added schedule %s; it fires next at %s\n",
			sc.Name, sc.NextFireAt.In(opts.IO.Zone()).Format(time.RFC3339))
		return err
	}
	_, err = fmt.Fprintln(opts.IO.Out, sc.Name)
	return err
}

// SchedulesListOptions are the parsed flags of `jobctl schedules list` and
// `jobctl schedules show`.
type SchedulesListOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Name   string // show: the schedule; list: empty
	Output outputOptions
}

// NewCmdSchedulesList builds `jobctl schedules list`. runF replaces the action in tests.
func NewCmdSchedulesList(f *Factory, runF func(context.Context, *SchedulesListOptions) error) *cobra.Command {
	opts := &SchedulesListOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List schedules",
		Long: `List the schedules with their cron expression, zone, next fire time, the job
their last fire created, and whether they are paused.

-o json prints an array of schedule objects as 'jobctl schedules show -o
json' prints them. -q prints schedule names.`,
		Example: `  # every schedule
  jobctl schedules list

  # the paused ones
  jobctl schedules -o json | jq -r '.[] | select(.paused) | .name'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return schedulesListRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, true)
	addHeaderFlags(cmd)
	cmd.Flags().Lookup("quiet").Usage = "print only schedule names, one per line"
	return cmd
}

func schedulesListRun(ctx context.Context, opts *SchedulesListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	all, err := store.ScheduleList(ctx)
	if err != nil {
		return err
	}
	switch {
	case opts.Output.Quiet:
		for _, sc := range all {
			fmt.Fprintln(opts.IO.Out, sc.Name)
		}
		return nil
	case opts.Output.Format == formatJSON:
		return writeJSON(opts.IO.Out, all)
	}
	now, err := store.Now(ctx)
	if err != nil {
		return err
	}
	ios := opts.IO
	p := newPalette(ios)
	t := newTable(ios, "NAME", "CRON", "TZ", "NEXT", "LAST JOB", "PAUSED")
	for _, sc := range all {
		next, paused := untilCell(ios, now, &sc.NextFireAt), ""
		if ios.OutIsTerminal && next == "" {
			next = "due"
		}
		if sc.Paused {
			next, paused = "", p.yellow("yes")
		}
		last := ""
		if sc.LastJobID != nil {
			last = strconv.FormatInt(*sc.LastJobID, 10)
		}
		t.addRow(sc.Name, sc.Cron, sc.TZ, next, last, paused)
	}
	return t.render()
}

// NewCmdSchedulesShow builds `jobctl schedules show`. runF replaces the action in tests.
func NewCmdSchedulesShow(f *Factory, runF func(context.Context, *SchedulesListOptions) error) *cobra.Command {
	opts := &SchedulesListOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one schedule",
		Long: `Show one schedule and the job it creates. Exits 3 when there is no schedule NAME.

-o json gives name, cron, tz, overlap, paused, next_fire_at (when it fires
next, on the database clock), last_job_id (null before the first fire),
creator, created_at, updated_at, and job: the template, with type,
operation, args, payload, load and timeout (null: the service's), key,
max_attempts, backoff, and rollback and rollback_type when it has them.`,
		Example: `  # the job the last fire created
  jobctl show "$(jobctl schedules show nightly -o json | jq .last_job_id)"`,
		Args: exactArgs(1, "a schedule name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return schedulesShowRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	return cmd
}

func schedulesShowRun(ctx context.Context, opts *SchedulesListOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	sc, err := store.ScheduleGet(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, sc)
	}
	now, err := store.Now(ctx)
	if err != nil {
		return err
	}
	ios := opts.IO
	kv := &keyValues{ios: ios}
	kv.add("name", sc.Name)
	kv.add("cron", sc.Cron)
	kv.add("tz", sc.TZ)
	kv.add("overlap", string(sc.Overlap))
	kv.add("paused", strconv.FormatBool(sc.Paused))
	kv.add("next fire", timeValue(ios, now, &sc.NextFireAt))
	last := ""
	if sc.LastJobID != nil {
		last = strconv.FormatInt(*sc.LastJobID, 10)
	}
	kv.add("last job", last)
	j := sc.Job
	kv.add("type", j.Type)
	if j.Operation != "" {
		kv.add("operation", j.Operation)
	}
	if len(j.Args) > 0 {
		kv.add("args", strings.Join(j.Args, " "))
	}
	if p := string(j.Payload); p != "" && p != "{}" {
		kv.add("payload", p)
	}
	if j.Load != nil {
		kv.add("load", formatFloat(*j.Load))
	}
	if j.Key != "" {
		kv.add("key", j.Key)
	}
	kv.add("max attempts", strconv.Itoa(max(j.MaxAttempts, 1)))
	if j.Timeout != nil {
		kv.add("timeout", time.Duration(*j.Timeout).String())
	}
	if j.Memory != nil {
		kv.add("memory limit", memoryLimitText(*j.Memory))
	}
	if j.Rollback != "" {
		kv.add("rollback", j.Rollback)
	}
	if j.RollbackType != "" {
		kv.add("rollback type", j.RollbackType)
	}
	kv.add("creator", sc.Creator)
	kv.add("created", timeValue(ios, now, &sc.CreatedAt))
	return kv.render()
}

// scheduleVerb is one of the commands that change a schedule by name.
// apply makes the change in a transaction and returns the schedule as it
// is after it (for rm: as it was), with engine.ErrNoChange when it had
// nothing to do.
type scheduleVerb struct {
	use, short, long, done string
	event                  string
	apply                  func(ctx context.Context, tx engine.TxStore, name string) (*engine.Schedule, error)
}

var (
	schedulePause = scheduleVerb{
		use: "pause", short: "Stop a schedule from firing",
		long: `Stop schedules from firing until 'jobctl schedules resume'. Jobs they
created already are left alone.`,
		done:  "paused",
		event: engine.EventSchedulesPause,
		apply: func(ctx context.Context, tx engine.TxStore, name string) (*engine.Schedule, error) {
			sc, err := tx.ScheduleGet(ctx, name)
			if err != nil || sc.Paused {
				return sc, cmp.Or(err, engine.ErrNoChange)
			}
			return schedule.Pause(ctx, tx, name)
		},
	}
	scheduleResume = scheduleVerb{
		use: "resume", short: "Let a paused schedule fire again",
		long: `Let paused schedules fire again, from the first time their expression names
after now: the fires that fell in the pause are not made up.`,
		done:  "resumed",
		event: engine.EventSchedulesResume,
		apply: func(ctx context.Context, tx engine.TxStore, name string) (*engine.Schedule, error) {
			sc, err := tx.ScheduleGet(ctx, name)
			if err != nil || !sc.Paused {
				return sc, cmp.Or(err, engine.ErrNoChange)
			}
			return schedule.Resume(ctx, tx, name)
		},
	}
	scheduleRemove = scheduleVerb{
		use: "rm", short: "Remove a schedule",
		long:  `Remove schedules. Jobs they created already are left alone.`,
		done:  "removed",
		event: engine.EventSchedulesRm,
		apply: func(ctx context.Context, tx engine.TxStore, name string) (*engine.Schedule, error) {
			sc, err := tx.ScheduleGet(ctx, name)
			if err != nil {
				return nil, err
			}
			return sc, tx.ScheduleDelete(ctx, name)
		},
	}
)

// SchedulesSetOptions are the parsed flags of `jobctl schedules pause`,
// `resume` and `rm`.
type SchedulesSetOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)

	Names  []string
	Output outputOptions
	verb   scheduleVerb
	Audit  auditOptions
}

// NewCmdSchedulesSet builds `jobctl schedules pause`, `resume` or `rm`.
// runF replaces the action in tests.
func NewCmdSchedulesSet(f *Factory, verb scheduleVerb, runF func(context.Context, *SchedulesSetOptions) error) *cobra.Command {
	opts := &SchedulesSetOptions{Audit: newAudit(f), IO: f.IO, Store: f.Store, verb: verb}
	cmd := &cobra.Command{
		Use:   verb.use + " NAME...",
		Short: verb.short,
		Long: verb.long + `

Piped, each name is printed as it is done; -o json prints the schedules as
'jobctl schedules show -o json' does (for rm: as they were). An unknown
name exits 3, after the others are done.`,
		Example: fmt.Sprintf("  jobctl schedules %s nightly", verb.use),
		Args:    minArgs(1, "a schedule name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return schedulesSetRun(cmd.Context(), opts)
		},
	}
	if verb.use == "rm" {
		cmd.Aliases = []string{"remove"}
	}
	addOutputFlags(cmd, &opts.Output, false)
	addReasonFlag(cmd, &opts.Audit)
	return cmd
}

func schedulesSetRun(ctx context.Context, opts *SchedulesSetOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	done := []*engine.Schedule{}
	var errs []error
	for _, name := range opts.Names {
		var sc *engine.Schedule
		err := engine.Recorded(ctx, store, opts.Audit.actor(), engine.EventAppendParams{Verb: opts.verb.event, Schedule: name},
			func(tx engine.TxStore, _ *engine.EventAppendParams) error {
				var err error
				sc, err = opts.verb.apply(ctx, tx, name)
				return err
			})
		if err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				err = &engine.NotFoundError{What: "schedule", ID: name}
			}
			errs = append(errs, err)
			continue
		}
		done = append(done, sc)
		switch {
		case opts.Output.Format == formatJSON:
		case opts.IO.OutIsTerminal:
			fmt.Fprintf(opts.IO.Out, "%s schedule %s\n", opts.verb.done, name)
		default:
			fmt.Fprintln(opts.IO.Out, name)
		}
	}
	if opts.Output.Format == formatJSON {
		if err := writeJSON(opts.IO.Out, done); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

package commands

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// defaultEventsLimit keeps a plain `jobctl events` on a screenful or two;
// --limit 0 lifts it.
const defaultEventsLimit = 100

// followOverlap is how far back each poll of `events -f` reads again. An
// event carries the database time it was written at, and its transaction
// commits a moment later, so one poll can miss an event that the next
// finds with an earlier time than the last it printed; the events seen are
// remembered, so none is printed twice.
const followOverlap = time.Minute

// EventsOptions are the parsed flags of `jobctl events`.
type EventsOptions struct {
	IO    *IOStreams
	Store func(ctx context.Context) (engine.Store, error)
	Clock engine.Clock

	Filter   engine.EventListParams // --since is its Since, --limit its Limit
	Follow   bool
	Interval time.Duration // how often -f polls
	Output   outputOptions
}

// NewCmdEvents builds `jobctl events`. runF replaces the action in tests.
func NewCmdEvents(f *Factory, runF func(context.Context, *EventsOptions) error) *cobra.Command {
	opts := &EventsOptions{IO: f.IO, Store: f.Store, Clock: f.Clock, Interval: defaultWatchInterval}
	var sinceText string
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show who changed what, when and why",
		Long: `Show the audit trail: every change made to the cluster by a command or by
'jobctl top', and by jobs through their node, oldest first, up to --limit of
the newest. Each event says when it happened (the database's clock), who
made the change (user@host, or "job ID@NODE" for a job submitting its
children), what it was (the command: submit, cancel, pause, resume,
requeue, release, delete, nodes maintenance, nodes drain, nodes rm, limits
set, limits rm, schedules add, pause, resume and rm, workflow start and
cancel, lease release, prune), what it named (a job and its type, a node,
a type, a schedule), how (for a job: the state it went from and to) and
the reason given with --reason.

A change and its event are written in one transaction: there is no change
without its event, and no event of a change that did not happen. A cancel
records an event for each child it cancels too; a prune is recorded once
it is done. The dispatcher's and the nodes' own work (dispatching, retries,
recovering a lost node's jobs) is not recorded here: 'jobctl show ID' has
each job's attempts.

--job ID keeps the events of one job, --node NAME those naming a node,
--since the recent ones (RFC 3339, a date, a clock time or a duration ago:
90m, 2d). -f keeps printing new events as they come, until interrupted;
-o json then prints one JSON object per line. Piped, the columns are
tab-separated and times are RFC 3339 in UTC.

-o wide adds each event's id; -o json prints an array of objects with id,
at, who, verb, job_id (null for none), node, type, schedule, detail and
reason. The events of a job go
when the job is pruned; the others with 'jobctl prune' by age.`,
		Example: `  # who cancelled job 42, and why
  jobctl events --job 42

  # everything done to node worker-3 this week
  jobctl events --node worker-3 --since 7d

  # follow the changes as they happen
  jobctl events -f

  # the reasons given today, for a script
  jobctl events --since 24h -o json --jq '.[] | select(.reason != "") | "\(.who): \(.verb) \(.reason)"'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("job") {
				id, _ := cmd.Flags().GetInt64("job")
				if id <= 0 {
					return usageErrorf(cmd, "invalid --job %d: want a job id", id)
				}
				opts.Filter.JobID = &id
			}
			if cmd.Flags().Changed("since") {
				t, err := parseTimeSpec(sinceText, opts.Clock.Now(), opts.IO.Zone(), towardPast)
				if err != nil {
					return usageErrorf(cmd, "invalid --since %q: want %s", sinceText, pastTimeForms)
				}
				opts.Filter.Since = &t
			}
			if opts.Filter.Limit < 0 {
				return usageErrorf(cmd, "invalid --limit %d: must not be negative", opts.Filter.Limit)
			}
			if err := opts.Output.check(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return eventsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.Int64("job", 0, "only the events of this job `ID`")
	fl.StringVar(&opts.Filter.Node, "node", "", "only the events naming this node")
	fl.StringVar(&sinceText, "since", "", "only events at or after this `TIME`: RFC 3339, a date, HH:MM or a duration ago (90m, 2d)")
	fl.IntVar(&opts.Filter.Limit, "limit", defaultEventsLimit, "show at most this many of the newest events; 0 for all")
	fl.BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new events as they come, until interrupted")
	_ = cmd.RegisterFlagCompletionFunc("job", completeJobIDs(f))
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodeNames(f))
	_ = cmd.RegisterFlagCompletionFunc("since", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("limit", cobra.NoFileCompletions)
	addOutputFlags(cmd, &opts.Output, false)
	addHeaderFlags(cmd)
	return cmd
}

func eventsRun(ctx context.Context, opts *EventsOptions) error {
	store, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	// Where a follow starts reading again: before the first read, so
	// nothing recorded meanwhile is missed.
	mark, err := store.Now(ctx)
	if err != nil {
		return err
	}
	filter := opts.Filter
	if filter.Limit > 0 {
		filter.Limit++ // one more tells whether the limit cut it short
	}
	events, err := store.EventList(ctx, filter)
	if err != nil {
		return err
	}
	cut := opts.Filter.Limit > 0 && len(events) > opts.Filter.Limit
	if cut {
		events = events[1:]
	}
	if err := printEvents(opts, events, true); err != nil {
		return err
	}
	if cut {
		fmt.Fprintf(opts.IO.ErrOut, "jobctl: showing the newest %d matching events; --limit 0 shows all\n", opts.Filter.Limit)
	}
	if !opts.Follow {
		return nil
	}
	return followEvents(ctx, opts, store, mark, events)
}

// followEvents polls for new events until ctx ends, printing each once.
func followEvents(ctx context.Context, opts *EventsOptions, store engine.Store, mark time.Time, printed []engine.Event) error {
	seen := map[int64]time.Time{}
	for _, e := range printed {
		seen[e.ID] = e.At
	}
	for {
		if sleepCtx(ctx, opts.Interval) != nil {
			return nil
		}
		filter := opts.Filter
		filter.Limit = 0
		since := mark.Add(-followOverlap)
		if filter.Since == nil || filter.Since.Before(since) {
			filter.Since = &since
		}
		now, err := store.Now(ctx)
		if err == nil {
			var events []engine.Event
			if events, err = store.EventList(ctx, filter); err == nil {
				var fresh []engine.Event
				for _, e := range events {
					if _, ok := seen[e.ID]; !ok {
						seen[e.ID] = e.At
						fresh = append(fresh, e)
					}
				}
				if len(fresh) > 0 {
					err = printEvents(opts, fresh, false)
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mark = now
		for id, at := range seen {
			if at.Before(since) {
				delete(seen, id) // older than any later poll reads
			}
		}
	}
}

// printEvents prints a batch of events: a table (its header with the first
// batch only), a JSON array, or one JSON object a line when following.
func printEvents(opts *EventsOptions, events []engine.Event, first bool) error {
	ios := opts.IO
	if opts.Output.Format == formatJSON {
		if !opts.Follow {
			if events == nil {
				events = []engine.Event{}
			}
			return writeJSON(ios.Out, events)
		}
		for _, e := range events {
			if err := writeJSONLine(ios.Out, e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(events) == 0 && !first {
		return nil
	}
	header := []string{"AGE", "WHO", "VERB", "WHAT", "DETAIL", "REASON"}
	if opts.Output.wide() {
		header = append([]string{"ID"}, header...)
	}
	t := newTable(ios, header...)
	if !first {
		t.header = nil
	}
	now := opts.Clock.Now()
	for _, e := range events {
		row := []string{timeCell(ios, now, &e.At), e.Who, e.Verb, eventSubject(e), e.Detail, e.Reason}
		if opts.Output.wide() {
			row = append([]string{strconv.FormatInt(e.ID, 10)}, row...)
		}
		t.addRow(row...)
	}
	return t.render()
}

// eventSubject is what an event names, in words: "job 42 (encode)",
// "node worker-3", "type encode", "schedule nightly".
func eventSubject(e engine.Event) string {
	var parts []string
	switch {
	case e.JobID != nil && e.Type != "":
		parts = append(parts, fmt.Sprintf("job %d (%s)", *e.JobID, e.Type))
	case e.JobID != nil:
		parts = append(parts, fmt.Sprintf("job %d", *e.JobID))
	case e.Type != "":
		parts = append(parts, "type "+e.Type)
	}
	if e.Node != "" {
		parts = append(parts, "node "+e.Node)
	}
	if e.Schedule != "" {
		parts = append(parts, "schedule "+e.Schedule)
	}
	return strings.Join(parts, " ")
}

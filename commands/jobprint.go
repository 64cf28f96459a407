package commands

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobctl/jobctl/engine"
)

// printJobs prints jobs as a listing: ids with -q, a JSON array of the
// objects `show -o json` prints, or a table.
func printJobs(ios *IOStreams, o outputOptions, now time.Time, jobs []*engine.Job, withHeader bool) error {
	switch {
	case o.Quiet:
		return printIDs(ios, jobs)
	case o.Format == formatJSON:
		if jobs == nil {
			jobs = []*engine.Job{} // an empty listing is [], not null
		}
		return writeJSON(ios.Out, jobs)
	}
	t := jobTable(ios, o, now, jobs)
	if !withHeader {
		t.header = nil
	}
	return t.render()
}

func printIDs(ios *IOStreams, jobs []*engine.Job) error {
	for _, j := range jobs {
		if _, err := fmt.Fprintln(ios.Out, j.ID); err != nil {
			return err
		}
	}
	return nil
}

// jobTable lays jobs out in the columns of `jobctl list`. RUN AFTER and
// PRIORITY are columns of the wide table; a terminal's default table shows
// them too when a listed job waits for its start time, or has a priority
// other than the default. Piped, the default columns never change, so
// scripts can count on them. The wide table's CPU, PEAK and WALL are what
// the job's last ended attempt used (Job.Usage).
func jobTable(ios *IOStreams, o outputOptions, now time.Time, jobs []*engine.Job) *table {
	header := []string{"ID", "STATUS", "TYPE", "OPERATION", "NODE", "LOAD", "PROGRESS", "AGE"}
	runAfter := !o.wide() && ios.OutIsTerminal && slices.ContainsFunc(jobs, func(j *engine.Job) bool { return delayed(j, now) })
	if runAfter {
		header = append(header, "RUN AFTER")
	}
	priority := !o.wide() && ios.OutIsTerminal && slices.ContainsFunc(jobs, func(j *engine.Job) bool { return j.Priority != engine.DefaultPriority })
	if priority {
		header = append(header, "PRIORITY")
	}
	if o.wide() {
		header = append(header, "KEY", "PRIORITY", "PARENT", "ATTEMPT", "STARTED", "FINISHED", "EXIT", "CPU", "PEAK", "WALL",
			"RUN AFTER", "MESSAGE", "COMMAND")
	}
	t := newTable(ios, header...)
	p := newPalette(ios)
	for _, j := range jobs {
		row := []string{
			strconv.FormatInt(j.ID, 10),
			statusCell(p, j.Status),
			j.Type,
			j.Operation,
			j.Node,
			formatFloat(j.Load),
			progressCell(j),
			timeCell(ios, now, &j.CreatedAt),
		}
		if runAfter {
			row = append(row, untilCell(ios, now, j.RunAfter))
		}
		if priority {
			row = append(row, strconv.Itoa(j.Priority))
		}
		if o.wide() {
			row = append(row,
				j.Key,
				strconv.Itoa(j.Priority),
				optionalInt(j.ParentID),
				fmt.Sprintf("%d/%d", j.Attempt-j.AttemptBase, j.MaxAttempts),
				timeCell(ios, now, j.StartedAt),
				timeCell(ios, now, j.FinishedAt),
				optionalInt(j.ExitCode),
				cpuCell(ios, j.Usage),
				peakCell(ios, j.Usage),
				wallCell(ios, j.Usage),
				untilCell(ios, now, j.RunAfter),
				j.Message,
				commandCell(ios, j.Args),
			)
		}
		t.addRow(row...)
	}
	return t
}

// commandCellWidth is how much of a job's command a terminal's wide
// table shows; the rest is cut, as `show` has it whole.
const commandCellWidth = 40

// commandCell shows a job's arguments (an exec job's command) with each
// argument's bounds visible: cut to commandCellWidth columns on a
// terminal, whole for a script.
func commandCell(ios *IOStreams, args []string) string {
	s := quoteArgs(args)
	if ios.OutIsTerminal && ansi.StringWidth(s) > commandCellWidth {
		s = ansi.Truncate(s, commandCellWidth, "…")
	}
	return s
}

// statusCell colours a job state by what it means for the operator.
func statusCell(p palette, s engine.Status) string {
	switch s {
	case engine.StatusFinished:
		return p.green(string(s))
	case engine.StatusWarning, engine.StatusPaused, engine.StatusCancelling:
		return p.yellow(string(s))
	case engine.StatusFailed:
		return p.red(string(s))
	case engine.StatusCancelled, engine.StatusDeleted, engine.StatusInstantiated:
		return p.gray(string(s))
	}
	return string(s)
}

// delayed reports whether a job waits for its run_after to pass.
func delayed(j *engine.Job, now time.Time) bool {
	return j.RunAfter != nil && j.RunAfter.After(now) && !j.Status.Terminal()
}

func progressCell(j *engine.Job) string {
	if j.Progress == 0 && j.Status != engine.StatusRunning {
		return ""
	}
	return fmt.Sprintf("%d%%", j.Progress)
}

func optionalInt[T int | int64](v *T) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(*v)
}

package commands

import (
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
)

// printAttempts follows show's key-value block with one row per attempt,
// after a blank line: under a header on a terminal, with ages; piped, tab
// separated with RFC 3339 times, as every piped table. The attempt running
// now shows the job's status where an ended one shows its ending, and what
// its node last reported of it: CPU so far, memory now, time so far.
func printAttempts(ios *IOStreams, now time.Time, j *engine.Job, attempts []engine.Attempt) error {
	if len(attempts) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(ios.Out); err != nil {
		return err
	}
	p := newPalette(ios)
	t := newTable(ios, "ATTEMPT", "NODE", "STARTED", "ENDED", "EXIT", "ENDING", "CPU", "PEAK", "WALL", "MESSAGE")
	for _, a := range attempts {
		ending := statusCell(p, a.Ending)
		cpu, peak, wall := cpuCell(ios, a.Usage), peakCell(ios, a.Usage), wallCell(ios, a.Usage)
		if a.EndedAt == nil {
			ending = statusCell(p, j.Status)
			if a.Live != nil {
				// So far, and the memory it holds now rather than a peak.
				cpu, peak = durationCell(ios, a.Live.CPUSeconds), bytesCell(ios, a.Live.Memory)
			}
			if a.StartedAt != nil {
				wall = durationCell(ios, max(now.Sub(*a.StartedAt), 0).Seconds())
			}
		}
		if a.Usage != nil && a.Usage.OOMKilled {
			peak = p.red(peak)
		}
		t.addRow(fmt.Sprint(a.Attempt), a.Node, attemptTime(ios, now, a.StartedAt), attemptTime(ios, now, a.EndedAt),
			optionalInt(a.ExitCode), ending, cpu, peak, wall, a.Message)
	}
	return t.render()
}

// attemptTime is a time in the attempts table: "5m ago" on a terminal,
// RFC 3339 in UTC with its fraction for scripts, as show's other times.
func attemptTime(ios *IOStreams, now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	if !ios.OutIsTerminal {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return human.Age(now.Sub(*t)) + " ago"
}

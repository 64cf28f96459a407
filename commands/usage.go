package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
)

// Measured use is shown for its reader like times are: for a person on a
// terminal in units ("1.25s", "210MiB"), for scripts (piped) as plain
// numbers of seconds and bytes. "" where nothing was measured.

// cpuCell is CPU seconds.
func cpuCell(ios *IOStreams, u *engine.Usage) string {
	if u == nil {
		return ""
	}
	return durationCell(ios, u.CPUSeconds)
}

// wallCell is a run's wall-clock time.
func wallCell(ios *IOStreams, u *engine.Usage) string {
	if u == nil {
		return ""
	}
	return durationCell(ios, u.WallSeconds)
}

// peakCell is a run's peak memory.
func peakCell(ios *IOStreams, u *engine.Usage) string {
	if u == nil {
		return ""
	}
	return bytesCell(ios, u.PeakMemory)
}

func durationCell(ios *IOStreams, s float64) string {
	if !ios.OutIsTerminal {
		return strconv.FormatFloat(s, 'f', 3, 64)
	}
	if s >= 60 {
		return human.Age(time.Duration(s * float64(time.Second)))
	}
	return engine.FormatNumber(s) + "s"
}

func bytesCell(ios *IOStreams, b int64) string {
	if !ios.OutIsTerminal {
		return strconv.FormatInt(b, 10)
	}
	if b == 0 {
		return "0"
	}
	return human.Bytes(b)
}

// coresCell is a number of cores used.
func coresCell(c float64) string { return engine.FormatNumber(c) }

// memoryLimitText is a job's memory limit as submit --memory takes it.
func memoryLimitText(limit int64) string {
	if limit <= 0 {
		return "none"
	}
	return engine.FormatSize(limit)
}

// usageSummary says in one line what a run used, for a show block:
// "CPU 12.5s (2.5 cores), peak memory 210MiB, 5s; killed at its memory
// limit".
func usageSummary(u *engine.Usage) string {
	s := "CPU " + engine.FormatNumber(u.CPUSeconds) + "s (" + engine.FormatNumber(u.Cores()) + " cores), peak memory " +
		human.Bytes(u.PeakMemory) + ", wall " + engine.FormatNumber(u.WallSeconds) + "s"
	if u.PeakMemory == 0 {
		s = "CPU " + engine.FormatNumber(u.CPUSeconds) + "s (" + engine.FormatNumber(u.Cores()) + " cores), wall " +
			engine.FormatNumber(u.WallSeconds) + "s"
	}
	if u.OOMKilled {
		s += "; killed at its memory limit"
	}
	return s
}

// runKey names one attempt of one job.
type runKey struct {
	job     int64
	attempt int
}

// liveUsage is what nodes last reported of the runs they run, by job and
// attempt (a node may still report a run it has just lost).
func liveUsage(nodes []*engine.Node) map[runKey]engine.LiveUsage {
	out := map[runKey]engine.LiveUsage{}
	for _, n := range nodes {
		for _, u := range n.RunningUsage {
			out[runKey{u.JobID, u.Attempt}] = u
		}
	}
	return out
}

// liveOf is what j's node last reported of its running attempt; ok is
// false when it reported nothing of it (not running, a builtin, or not
// measured yet).
func liveOf(live map[runKey]engine.LiveUsage, j *engine.Job) (engine.LiveUsage, bool) {
	u, ok := live[runKey{j.ID, j.Attempt}]
	if !ok || !j.Status.NodeOwned() {
		return engine.LiveUsage{}, false
	}
	return u, true
}

// nodeLive reads what node name last reported of its running jobs; none
// when the node is unknown.
func nodeLive(ctx context.Context, store nodeReader, name string) (map[runKey]engine.LiveUsage, error) {
	if name == "" {
		return nil, nil
	}
	n, err := store.NodeGet(ctx, name)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return liveUsage([]*engine.Node{n}), nil
}

// typeUsage is the measured use of each of types over its latest runs
// runs, in one indexed read a type.
func typeUsage(ctx context.Context, store usageReader, types []typeCounts, runs int) ([]engine.TypeUsage, error) {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Type
	}
	if len(names) == 0 {
		return []engine.TypeUsage{}, nil
	}
	attempts, err := store.JobAttemptUsageList(ctx, engine.JobAttemptUsageParams{Types: names, Runs: runs})
	if err != nil {
		return nil, err
	}
	return engine.SummarizeUsage(attempts), nil
}

// verdictText is a load verdict in words.
func verdictText(v engine.LoadVerdict) string {
	switch v {
	case engine.LoadUsesMore:
		return "uses more"
	case engine.LoadUsesLess:
		return "uses less"
	case engine.LoadFewRuns:
		return "too few runs"
	}
	return "ok"
}

// printUsageTable shows each type's declared load beside what its runs
// used, and below it a line for each type whose load is far off.
func printUsageTable(ios *IOStreams, p palette, usage []engine.TypeUsage) error {
	t := newTable(ios, "TYPE", "LOAD", "RUNS", "CORES P50", "CORES P95", "MEMORY P95", "OOM", "CHECK")
	var notes []string
	for _, u := range usage {
		check := verdictText(u.Verdict)
		switch u.Verdict {
		case engine.LoadUsesMore, engine.LoadUsesLess:
			check = p.yellow(check)
			notes = append(notes, u.Note)
		case engine.LoadFewRuns:
			check = p.gray(check)
		}
		t.addRow(u.Type, formatFloat(u.DeclaredLoad), strconv.Itoa(u.Runs), coresCell(u.CoresP50), coresCell(u.CoresP95),
			human.Bytes(u.MemoryP95), strconv.Itoa(u.OOMKilled), check)
	}
	if err := t.render(); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(ios.Out, p.yellow("! "+n)); err != nil {
			return err
		}
	}
	return nil
}

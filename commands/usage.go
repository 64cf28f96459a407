package commands

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
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
		return age(time.Duration(s * float64(time.Second)))
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
	return formatBytes(b)
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
// "CPU 12.5s (2.5 cores), peak memory 210.0MiB, 5s; killed at its memory
// limit".
func usageSummary(u *engine.Usage) string {
	s := "CPU " + engine.FormatNumber(u.CPUSeconds) + "s (" + engine.FormatNumber(u.Cores()) + " cores), peak memory " +
		formatBytes(u.PeakMemory) + ", wall " + engine.FormatNumber(u.WallSeconds) + "s"
	if u.PeakMemory == 0 {
		s = "CPU " + engine.FormatNumber(u.CPUSeconds) + "s (" + engine.FormatNumber(u.Cores()) + " cores), wall " +
			engine.FormatNumber(u.WallSeconds) + "s"
	}
	if u.OOMKilled {
		s += "; killed at its memory limit"
	}
	return s
}

// liveUsage finds what nodes last reported of running jobs, by job id,
// for the attempt each runs now; nodes is read once for all of them.
func liveUsage(nodes []*engine.Node) map[int64]engine.LiveUsage {
	out := map[int64]engine.LiveUsage{}
	for _, n := range nodes {
		for _, u := range n.RunningUsage {
			out[u.JobID] = u
		}
	}
	return out
}

// liveOf is what j's node last reported of its running attempt; ok is
// false when it reported nothing of it (not running, a builtin, or not
// measured yet).
func liveOf(live map[int64]engine.LiveUsage, j *engine.Job) (engine.LiveUsage, bool) {
	u, ok := live[j.ID]
	if !ok || u.Attempt != j.Attempt || !j.Status.NodeOwned() {
		return engine.LiveUsage{}, false
	}
	return u, true
}

// nodeLive reads what node name last reported of its running jobs; none
// when the node is unknown.
func nodeLive(ctx context.Context, store engine.Store, name string) (map[int64]engine.LiveUsage, error) {
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

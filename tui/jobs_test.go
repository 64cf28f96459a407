package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// usagePane is a jobs pane of one node's jobs, width wide, where the node
// last reported the use of job 2's current attempt, and of an attempt of
// job 1 that is no longer the running one.
func usagePane(t *testing.T, width int) JobsPane {
	t.Helper()
	now := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	jobs := []*engine.Job{
		{ID: 1, Type: "encode", Status: engine.StatusRunning, Node: "n1", Load: 1, Attempt: 2, Priority: engine.DefaultPriority, CreatedAt: now},
		{ID: 2, Type: "encode", Status: engine.StatusRunning, Node: "n1", Load: 1, Attempt: 1, Priority: engine.DefaultPriority, CreatedAt: now},
		{ID: 3, Type: "noop", Status: engine.StatusQueued, Load: 1, Priority: engine.DefaultPriority, CreatedAt: now},
	}
	snap := &Snapshot{At: now, Jobs: jobs, Query: Query{Node: "n1"}, Matching: -1,
		Nodes: []*engine.Node{{Name: "n1", RunningUsage: []engine.LiveUsage{
			{JobID: 1, Attempt: 1, Cores: 7, Memory: 9 << 30}, // an attempt that ended
			{JobID: 2, Attempt: 1, Cores: 2.5, Memory: 300 << 20},
		}}}}
	p := NewJobsPane(NewStyles(false), DefaultKeyMap())
	p.SetSize(width, 10)
	p, _ = p.Update(snapshotMsg{snap: snap})
	return p
}

// The pane shows the cores and memory a node reported of the attempt a job
// runs now, and none of an attempt that ended; CPU sorts by them.
func TestJobsPaneShowsWhatRunningJobsUse(t *testing.T) {
	p := usagePane(t, 100)
	view := p.View()
	if !strings.Contains(view, "CPU") || !strings.Contains(view, "MEM") {
		t.Fatalf("no CPU and MEM columns:\n%s", view)
	}
	rows := map[string]string{} // by job id
	for _, line := range strings.Split(view, "\n") {
		f := strings.Fields(strings.TrimLeft(line, "›▸ "))
		if len(f) > 1 && f[1] == "RUNNING" {
			rows[f[0]] = line
		}
	}
	if !strings.Contains(rows["2"], "2.5") || !strings.Contains(rows["2"], "300MiB") {
		t.Errorf("job 2's row lacks its use: %q", rows["2"])
	}
	if strings.Contains(rows["1"], "9.0GiB") || strings.Contains(rows["1"], " 7 ") {
		t.Errorf("job 1's row shows the use of an attempt that ended: %q", rows["1"])
	}

	p.sort = jobSort{col: sortCPU, desc: true}
	p.arrange()
	if p.jobs[0].ID != 2 {
		t.Errorf("by CPU, descending: job %d first, want 2", p.jobs[0].ID)
	}
	p.sort = jobSort{col: sortMem}
	p.arrange()
	if p.jobs[len(p.jobs)-1].ID != 2 {
		t.Errorf("by MEM, ascending: job %d last, want 2", p.jobs[len(p.jobs)-1].ID)
	}
}

// Too narrow for them beside the type, the CPU and MEM columns give way.
func TestJobsPaneDropsUsageWhenNarrow(t *testing.T) {
	p := usagePane(t, 60)
	if view := p.View(); strings.Contains(view, "CPU") || strings.Contains(view, "MEM") {
		t.Errorf("CPU and MEM at 60 columns:\n%s", view)
	}
}

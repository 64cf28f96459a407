package runner

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/cgroup"
)

// meter measures one process run: in its cgroup where it has one, else
// by the kernel's accounting of the processes it reaped (the leader's own
// rusage, which holds every descendant that was waited for) and, while it
// runs, of the processes of its process group.
type meter struct {
	group   *cgroup.Group // nil: none
	pgid    int
	started time.Time

	mu      sync.Mutex
	last    time.Time     // of the last live sample
	lastCPU time.Duration // CPU time at that sample
}

// procTotals are the CPU time and memory of one process group, from
// /proc; ok is false when no process of the group was found.
type procTotals struct {
	cpu    time.Duration
	memory int64
	ok     bool
}

// live is what the run has used so far: CPU time, the CPU used per wall
// second since the last live sample (or since the start), and the memory
// it holds now. procs reads its process group's totals from /proc, for
// what its cgroup does not measure.
func (m *meter) live(procs func(pgid int) procTotals) (cpu time.Duration, cores float64, memory int64, ok bool) {
	now := time.Now()
	if m.group != nil {
		if s, err := m.group.Sample(); err == nil && s.HasCPU {
			cpu, memory, ok = s.CPU, s.Memory, true
			if !s.HasMemory {
				memory = procs(m.pgid).memory
			}
		}
	}
	if !ok {
		t := procs(m.pgid)
		if !t.ok {
			return 0, 0, 0, false
		}
		cpu, memory = t.cpu, t.memory
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	since, before := m.started, time.Duration(0)
	if !m.last.IsZero() {
		since, before = m.last, m.lastCPU
	}
	if wall := now.Sub(since); wall > 0 {
		cores = max(float64(cpu-before), 0) / float64(wall)
	}
	m.last, m.lastCPU = now, cpu
	return cpu, cores, memory, true
}

// final is what the run used, read once its processes are gone: from the
// group where it measures, from the leader's rusage otherwise; wall is
// from its start to its leader's end.
func (m *meter) final(state *os.ProcessState, wall time.Duration) (engine.Usage, cgroup.Sample) {
	u := engine.Usage{WallSeconds: wall.Seconds()}
	s := cgroup.Sample{OOMKills: -1}
	if m.group != nil {
		if got, err := m.group.Sample(); err == nil {
			s = got
		}
	}
	var ru *syscall.Rusage
	if state != nil {
		ru, _ = state.SysUsage().(*syscall.Rusage)
	}
	switch {
	case s.HasCPU:
		u.CPUSeconds = s.CPU.Seconds()
	case ru != nil:
		u.CPUSeconds = (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Seconds()
	}
	switch {
	case s.HasPeak:
		u.PeakMemory = s.Peak
	case ru != nil:
		u.PeakMemory = maxRSSBytes(ru)
	}
	return u, s
}

package runner

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/cgroup"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// cgroups opens the cgroups of a test node, skipping only where this
// machine cannot have them: not root, or no cgroup file system.
func cgroups(t *testing.T, limits bool) *cgroup.Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root here, and the tests do not run as root")
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		t.Skip("the kernel has no cgroup file system mounted")
	}
	m, err := cgroup.Open(cgroup.Options{Name: t.Name(), Limits: limits})
	if err != nil {
		t.Fatalf("cgroup.Open: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func newGroup(t *testing.T, m *cgroup.Manager, l cgroup.Limits) *cgroup.Group {
	t.Helper()
	g, err := m.NewGroup("run", l)
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	return g
}

// busyLoop burns about a second of CPU in the shell and a child of it,
// then prints with the shell's times builtin the CPU time the shell and
// its children used: the job's own account of its CPU time.
const busyLoop = `i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done; sh -c 'j=0; while [ $j -lt 150000 ]; do j=$((j+1)); done'; times`

var timesLine = regexp.MustCompile(`(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s`)

// reportedCPU adds up the user and system times of `times` output.
func reportedCPU(t *testing.T, log string) float64 {
	t.Helper()
	lines := timesLine.FindAllStringSubmatch(log, -1)
	if len(lines) != 2 {
		t.Fatalf("the job's log %q has no two lines of times", log)
	}
	var total float64
	for _, m := range lines {
		for _, i := range []int{1, 3} {
			minutes, _ := strconv.ParseFloat(m[i], 64)
			seconds, _ := strconv.ParseFloat(m[i+1], 64)
			total += minutes*60 + seconds
		}
	}
	return total
}

// cpuWithin10 holds the measured CPU seconds to within 10 % of what the
// job reported: CPU time against CPU time, which a busy machine does not
// change the way it changes wall-clock time.
func cpuWithin10(t *testing.T, res Result, log string) {
	t.Helper()
	if res.Usage == nil {
		t.Fatalf("result %+v has no usage", res)
	}
	reported := reportedCPU(t, log)
	if reported < 0.3 {
		t.Fatalf("the busy loop used only %.2fs of CPU; too little to compare", reported)
	}
	if math.Abs(res.Usage.CPUSeconds-reported) > 0.1*reported {
		t.Errorf("measured %.3fs of CPU, the job reported %.3fs: more than 10%% apart", res.Usage.CPUSeconds, reported)
	}
	t.Logf("measured %.3fs of CPU, the job reported %.3fs", res.Usage.CPUSeconds, reported)
	if res.Usage.WallSeconds <= 0 || res.Usage.PeakMemory <= 0 {
		t.Errorf("usage %+v: want a wall time and a peak", *res.Usage)
	}
}

func TestUsageByRusageMatchesTheJobsCPUTime(t *testing.T) {
	out := newRecordingOutput()
	res := waitDone(t, start(t, Spec{JobID: 1, Attempt: 1, Argv: []string{"sh", "-c", busyLoop}}, out))
	if res.Outcome != Succeeded {
		t.Fatalf("result %+v; log %s", res, out.logText())
	}
	cpuWithin10(t, res, out.logText())
}

func TestUsageByCgroupMatchesTheJobsCPUTime(t *testing.T) {
	g := newGroup(t, cgroups(t, false), cgroup.Limits{})
	out := newRecordingOutput()
	res := waitDone(t, start(t, Spec{JobID: 1, Attempt: 1, Argv: []string{"sh", "-c", busyLoop}, Group: g}, out))
	if res.Outcome != Succeeded {
		t.Fatalf("result %+v; log %s", res, out.logText())
	}
	cpuWithin10(t, res, out.logText())
}

// allocate200MiB holds 200 MiB at once: tail keeps a last "line" without
// a newline whole in memory.
var allocate200MiB = []string{"sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null"}

func TestPeakMemoryOf200MiB(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group func(t *testing.T) *cgroup.Group
	}{
		{"rusage", func(*testing.T) *cgroup.Group { return nil }},
		{"cgroup", func(t *testing.T) *cgroup.Group { return newGroup(t, cgroups(t, false), cgroup.Limits{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newRecordingOutput()
			res := waitDone(t, start(t, Spec{JobID: 1, Attempt: 1, Argv: allocate200MiB, Group: tc.group(t)}, out))
			if res.Outcome != Succeeded || res.Usage == nil {
				t.Fatalf("result %+v; log %s", res, out.logText())
			}
			if res.Usage.PeakMemory < 200<<20 {
				t.Errorf("peak memory %d bytes, want at least 200 MiB", res.Usage.PeakMemory)
			}
			if res.Usage.OOMKilled {
				t.Error("killed for memory without a limit")
			}
		})
	}
}

func TestMemoryLimitKillsWithItsOwnReason(t *testing.T) {
	m := cgroups(t, true)
	if !m.Support().MemoryLimit {
		t.Skipf("this kernel's cgroups hold no memory limit here: %v", m.Support().Missing)
	}
	g := newGroup(t, m, cgroup.Limits{Memory: 64 << 20})
	out := newRecordingOutput()
	res := waitDone(t, start(t, Spec{JobID: 1, Attempt: 1, Argv: allocate200MiB, Group: g}, out))
	if res.Outcome != Failed || !strings.HasPrefix(res.Reason, "killed: out of memory, limit 64MiB") {
		t.Errorf("result %+v, want a failure killed: out of memory, limit 64MiB", res)
	}
	if res.Usage == nil || !res.Usage.OOMKilled || res.Usage.PeakMemory > 64<<20 {
		t.Errorf("usage %+v, want OOMKilled and a peak within the limit", res.Usage)
	}
}

func TestLiveUsageOfARunningJob(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group func(t *testing.T) *cgroup.Group
	}{
		{"proc", func(*testing.T) *cgroup.Group { return nil }},
		{"cgroup", func(t *testing.T) *cgroup.Group { return newGroup(t, cgroups(t, false), cgroup.Limits{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newRecordingOutput()
			// A busy child, so the CPU is its group's, not the leader's.
			r := start(t, Spec{JobID: 5, Attempt: 2, Argv: []string{"sh", "-c", "sh -c 'while :; do :; done'"}, Group: tc.group(t)}, out)
			var u engine.LiveUsage
			var ok bool
			if !waitfor.Within(hangGuard, func() bool {
				u, ok = r.Live()
				return ok && u.CPUSeconds > 0.2
			}) {
				t.Fatalf("live usage never showed the busy loop: %+v, %v", u, ok)
			}
			if u.JobID != 5 || u.Attempt != 2 || u.Memory <= 0 || u.Cores <= 0 {
				t.Errorf("live usage %+v: want job 5 attempt 2 with memory and cores", u)
			}
			r.Cancel("done", time.Second)
			waitDone(t, r)
			if _, ok := r.Live(); ok {
				t.Error("an ended run reports live usage")
			}
		})
	}
}

func TestCgroupEndsWhatLeftTheProcessGroup(t *testing.T) {
	g := newGroup(t, cgroups(t, false), cgroup.Limits{})
	out := newRecordingOutput()
	res := waitDone(t, start(t, Spec{JobID: 1, Attempt: 1, Group: g,
		Argv: []string{"sh", "-c", "setsid sleep 300 & echo pid=$!"}}, out))
	if res.Outcome != Succeeded {
		t.Fatalf("result %+v", res)
	}
	log := out.logText()
	if strings.Contains(log, "output still open") {
		t.Errorf("the job's output stayed open after it ended: %s", log)
	}
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("log %q names no pid", log)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); err == nil && !isZombie(pid) {
		t.Errorf("process %d, which left the job's process group, still runs after the job ended", pid)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// Jobs started all at once, more than there are spawner threads, are each
// born in their own cgroup: on v1 each thread moves only itself into a
// job's group for its fork, never the thread forking beside it.
func TestJobsStartedAtOnceEachInTheirOwnCgroup(t *testing.T) {
	m := cgroups(t, false)
	const n = 3 * spawnThreads
	runs := make([]*Run, n)
	errs := make([]error, n)
	outs := make([]*recordingOutput, n)
	var wg sync.WaitGroup
	for i := range n {
		g, err := m.NewGroup(fmt.Sprintf("run%d", i), cgroup.Limits{})
		if err != nil {
			t.Fatalf("NewGroup: %v", err)
		}
		outs[i] = newRecordingOutput()
		wg.Go(func() {
			runs[i], errs[i] = Start(Spec{JobID: int64(i + 1), Attempt: 1, Argv: []string{"cat", "/proc/self/cgroup"}, Group: g}, outs[i])
		})
	}
	wg.Wait()
	for i, r := range runs {
		if errs[i] != nil {
			t.Fatalf("job %d: Start: %v", i+1, errs[i])
		}
		if res := waitDone(t, r); res.Outcome != Succeeded {
			t.Fatalf("job %d: result %+v; log %s", i+1, res, outs[i].logText())
		}
	}
	group := regexp.MustCompile(`/run(\d+)$`)
	for i := range runs {
		own := 0
		for line := range strings.Lines(outs[i].logText()) {
			m := group.FindStringSubmatch(strings.TrimSpace(line))
			switch {
			case m == nil:
			case m[1] == strconv.Itoa(i):
				own++
			default:
				t.Errorf("job %d, started in group run%d, ran in %q", i+1, i, strings.TrimSpace(line))
			}
		}
		if own == 0 {
			t.Errorf("job %d ran in no group of its own: %s", i+1, outs[i].logText())
		}
	}
}

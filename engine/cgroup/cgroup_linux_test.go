//go:build linux

package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// openForTest opens a manager for this test, skipping only where this
// machine cannot have cgroups: not root (they need privileges here) or no
// cgroup file system at all.
func openForTest(t *testing.T, limits bool) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root here, and the tests do not run as root")
	}
	if _, err := os.Stat(unifiedMount); err != nil {
		t.Skipf("the kernel has no cgroup file system mounted at %s", unifiedMount)
	}
	m, err := Open(Options{Name: t.Name(), Limits: limits})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// start starts argv inside g the way the runner does: born in the group
// (CLONE_INTO_CGROUP on v2; from a thread inside the group on v1).
func start(t *testing.T, g *Group, argv ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.Place(cmd.SysProcAttr)
	done := make(chan error, 1)
	go func() {
		// Never unlocked: should leaving the group fail, the thread ends
		// with this goroutine rather than stay in the group.
		runtime.LockOSThread()
		leave, err := g.EnterThread()
		if err != nil {
			done <- err
			return
		}
		err = cmd.Start()
		if lerr := leave(); lerr != nil {
			err = errors.Join(err, lerr)
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, out
}

func newGroup(t *testing.T, m *Manager, l Limits) *Group {
	t.Helper()
	g, err := m.NewGroup(strings.ReplaceAll(t.Name(), "/", "_"), l)
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
	})
	return g
}

func sample(t *testing.T, g *Group) Sample {
	t.Helper()
	s, err := g.Sample()
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return s
}

// busyLoop is a shell loop that burns about a second of CPU and then
// reports, with the shell's times builtin, the CPU time the shell and its
// children used: what the job itself says it used.
const busyLoop = `i=0; while [ $i -lt 700000 ]; do i=$((i+1)); done; sh -c 'j=0; while [ $j -lt 100000 ]; do j=$((j+1)); done'; times`

var timesLine = regexp.MustCompile(`(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s`)

// reportedCPU adds up the user and system times of `times` output.
func reportedCPU(t *testing.T, out string) time.Duration {
	t.Helper()
	var total float64
	lines := timesLine.FindAllStringSubmatch(out, -1)
	if len(lines) != 2 {
		t.Fatalf("times printed %q, want two lines of user and system time", out)
	}
	for _, m := range lines {
		for _, i := range []int{1, 3} {
			minutes, _ := strconv.ParseFloat(m[i], 64)
			seconds, _ := strconv.ParseFloat(m[i+1], 64)
			total += minutes*60 + seconds
		}
	}
	return time.Duration(total * float64(time.Second))
}

// within10 checks that measured is within 10 % of reported, the CPU time
// the job reported of itself; not a wall-clock time, so a busy machine
// does not change it.
func within10(t *testing.T, what string, measured, reported time.Duration) {
	t.Helper()
	if reported < 300*time.Millisecond {
		t.Fatalf("%s: the busy loop used only %s of CPU; too little to compare", what, reported)
	}
	if diff := math.Abs(float64(measured - reported)); diff > 0.1*float64(reported) {
		t.Errorf("%s: measured %s of CPU, the job reported %s: more than 10%% apart", what, measured, reported)
	} else {
		t.Logf("%s: measured %s of CPU, the job reported %s", what, measured, reported)
	}
}

func TestSupportOnThisMachine(t *testing.T) {
	m := openForTest(t, true)
	s := m.Support()
	t.Logf("support: %+v; %s", s, s.Describe(true))
	if !s.CPU {
		t.Errorf("CPU time is not measured: %+v", s)
	}
	if full := s.Memory && s.MemoryLimit && s.CPUShare; s.Version == 1 && !full {
		t.Errorf("a v1 host with cpu, cpuacct and memory hierarchies: %+v", s)
	}
	for _, h := range m.tree {
		if _, err := os.Stat(h.node); err != nil {
			t.Errorf("the node's directory: %v", err)
		}
	}
	without := openForTest(t, false).Support()
	if without.CPUShare || without.MemoryLimit {
		t.Errorf("without limits the groups enforce %+v", without)
	}
}

func TestGroupMeasuresTheCPUOfTheWholeTree(t *testing.T) {
	m := openForTest(t, false)
	g := newGroup(t, m, Limits{})
	cmd, out := start(t, g, "sh", "-c", busyLoop)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the busy loop: %v", err)
	}
	s := sample(t, g)
	if !s.HasCPU {
		t.Fatal("the group measures no CPU")
	}
	within10(t, "cgroup", s.CPU, reportedCPU(t, out.String()))
}

func TestGroupPeakMemory(t *testing.T) {
	m := openForTest(t, false)
	if !m.Support().Memory {
		t.Skipf("this kernel's cgroups measure no memory here: %v", m.Support().Missing)
	}
	g := newGroup(t, m, Limits{})
	// tail keeps a last "line" of 200 MiB, with no newline, whole in memory.
	cmd, _ := start(t, g, "sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the allocation: %v", err)
	}
	s := sample(t, g)
	if !s.HasPeak || s.Peak < 200<<20 {
		t.Errorf("peak %d bytes (has peak: %v), want at least 200 MiB", s.Peak, s.HasPeak)
	}
	if s.OOMKills > 0 {
		t.Errorf("%d processes killed for memory without a limit", s.OOMKills)
	}
}

func TestGroupMemoryLimitKills(t *testing.T) {
	m := openForTest(t, true)
	if !m.Support().MemoryLimit {
		t.Skipf("this kernel's cgroups hold no memory limit here: %v", m.Support().Missing)
	}
	g := newGroup(t, m, Limits{Memory: 64 << 20, Load: 1, CPUShare: true})
	if g.MemoryLimit() != 64<<20 {
		t.Errorf("MemoryLimit = %d", g.MemoryLimit())
	}
	cmd, _ := start(t, g, "sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null")
	err := cmd.Wait()
	if err == nil {
		t.Fatal("200 MiB in a group of 64 MiB: the job succeeded")
	}
	s := sample(t, g)
	if s.OOMKills < 1 && s.LimitHits < 1 {
		t.Errorf("after %v: %d OOM kills, %d limit hits; want the kill counted", err, s.OOMKills, s.LimitHits)
	}
	if s.Peak > 64<<20 {
		t.Errorf("peak %d above the limit", s.Peak)
	}
	if m.version == 1 {
		if got := readString(filepath.Join(g.directories()[slicesIndexRole(m, roleCPUShare)], "cpu.shares")); got != "1024" {
			t.Errorf("cpu.shares of load 1 = %q, want 1024", got)
		}
		// No swap: memory and swap together may hold no more than memory.
		memsw := filepath.Join(g.directories()[slicesIndexRole(m, roleMemory)], "memory.memsw.limit_in_bytes")
		if m.Support().NoSwap && readString(memsw) != strconv.Itoa(64<<20) {
			t.Errorf("memory.memsw.limit_in_bytes = %q, want the memory limit", readString(memsw))
		}
	}
}

func slicesIndexRole(m *Manager, role string) int {
	for i, h := range m.tree {
		if h.serves(role) {
			return i
		}
	}
	return -1
}

func TestGroupKillTakesProcessesThatLeftTheProcessGroup(t *testing.T) {
	m := openForTest(t, false)
	g := newGroup(t, m, Limits{})
	cmd, _ := start(t, g, "sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo started")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the escaped sleep to show in the group", func() bool {
		return len(strings.Fields(readString(filepath.Join(g.directories()[0], "cgroup.procs")))) > 0
	})
	g.Kill()
	if left := readString(filepath.Join(g.directories()[0], "cgroup.procs")); left != "" {
		t.Errorf("after Kill the group holds %q", left)
	}
}

func TestV2OnTheUnifiedMountMeasuresCPU(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root here, and the tests do not run as root")
	}
	own, err := readOwnCgroups(procSelfCgroup)
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := readCgroupMounts(procSelfMountinfo)
	if err != nil {
		t.Fatal(err)
	}
	var v2 *mount
	for i := range mounts {
		if mounts[i].fstype == "cgroup2" {
			v2 = &mounts[i]
		}
	}
	if v2 == nil {
		t.Skip("the kernel has no cgroup v2 mounted")
	}
	if !kernelAtLeast(5, 7) {
		t.Skip("the kernel is older than 5.7 and cannot start a process inside a cgroup")
	}
	m, err := openV2(v2.dir(own[""]), dirName(t.Name()), true)
	if err != nil {
		t.Fatalf("openV2: %v", err)
	}
	defer m.Close()
	t.Logf("v2 at %s: %s", v2.point, m.Support().Describe(true))
	g, err := m.NewGroup("run", Limits{Load: 2, CPUShare: true, Memory: 64 << 20})
	if err != nil {
		t.Fatalf("NewGroup: %v", err)
	}
	defer func() { _ = g.Remove() }()
	cmd, out := start(t, g, "sh", "-c", "cat /proc/self/cgroup; "+busyLoop)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if want := "0::" + strings.TrimPrefix(g.directories()[0], v2.point); !strings.Contains(out.String(), want+"\n") {
		t.Errorf("the process was not born in its group: /proc/self/cgroup says %q, want %q", out.String(), want)
	}
	within10(t, "cgroup v2", sample(t, g).CPU, reportedCPU(t, out.String()))
}

func TestOpenRemovesWhatGoneNodesLeft(t *testing.T) {
	m := openForTest(t, false)
	h := m.tree[0]
	// A pid that no process has: above the kernel's pid limit.
	stale := filepath.Join(h.own, fmt.Sprintf("%s%d-1-gone", dirPrefix, 1<<23))
	if err := os.MkdirAll(filepath.Join(stale, "job-1-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(h.own, fmt.Sprintf("%s%d-99-alive", dirPrefix, os.Getpid()))
	if err := os.Mkdir(live, 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = removeDir(live) }()
	openForTest(t, false)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory of a gone node is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the directory of a live process was removed: %v", err)
	}
}

func TestParseProcFiles(t *testing.T) {
	dir := t.TempDir()
	cg := filepath.Join(dir, "cgroup")
	writeTestFile(t, cg, "9:name=systemd:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/user\n0::/init.scope\n")
	own, err := readOwnCgroups(cg)
	if err != nil {
		t.Fatal(err)
	}
	if own["memory"] != "/process_api/abc" || own["cpu"] != "/user" || own["cpuacct"] != "/user" || own[""] != "/init.scope" {
		t.Errorf("own = %v", own)
	}
	mi := filepath.Join(dir, "mountinfo")
	writeTestFile(t, mi, `32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 /process_api /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/un\040ified rw,relatime - cgroup2 cgroup2 rw
50 31 0:40 / /proc rw - proc proc rw
`)
	mounts, err := readCgroupMounts(mi)
	if err != nil || len(mounts) != 3 {
		t.Fatalf("mounts = %+v, %v", mounts, err)
	}
	if mounts[2].point != "/sys/fs/cgroup/un ified" {
		t.Errorf("escaped mount point read as %q", mounts[2].point)
	}
	tree := v1Hierarchies(own, mounts)
	if len(tree) != 2 {
		t.Fatalf("hierarchies = %+v", tree)
	}
	if tree[0].own != "/sys/fs/cgroup/cpu,cpuacct/user" || !tree[0].serves(roleCPUTime) || !tree[0].serves(roleCPUShare) {
		t.Errorf("cpu hierarchy = %+v", tree[0])
	}
	if tree[1].own != "/sys/fs/cgroup/memory/abc" || !tree[1].serves(roleMemory) {
		t.Errorf("memory hierarchy = %+v (the mount's root is cut from the path)", tree[1])
	}
}

func TestWeightsFollowTheLoad(t *testing.T) {
	for _, tc := range []struct {
		load           float64
		weight, shares int64
	}{{1, 100, 1024}, {2.5, 250, 2560}, {0, 1, 2}, {0.001, 1, 2}, {1e9, 10000, 262144}, {math.NaN(), 1, 2}} {
		if w, s := cpuWeight(tc.load), cpuShares(tc.load); w != tc.weight || s != tc.shares {
			t.Errorf("load %v: weight %d, shares %d; want %d, %d", tc.load, w, s, tc.weight, tc.shares)
		}
	}
}

func TestDescribe(t *testing.T) {
	full := Support{Version: 1, CPU: true, Memory: true, CPUShare: true, MemoryLimit: true, NoSwap: true}
	if got, want := full.Describe(true), "each job runs in a cgroup (v1) of its own, which measures CPU time and peak memory; enforcing a CPU share from each job's load and memory limits (without swap)"; got != want {
		t.Errorf("Describe = %q\nwant       %q", got, want)
	}
	cpuOnly := Support{Version: 2, CPU: true, Missing: []string{"the memory controller is not delegated to /x"}}
	got := cpuOnly.Describe(true)
	for _, want := range []string{"measures CPU time", "the kernel's accounting", "cannot enforce CPU shares or memory limits", "not delegated to /x"} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe = %q, want it to say %q", got, want)
		}
	}
}

// writeFile writes a stand-in for a file of /proc.
func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

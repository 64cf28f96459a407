//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is the cgroup of one run: a directory in each hierarchy the node
// uses.
type Group struct {
	m      *Manager
	memory int64 // the memory limit in force; 0: none

	// mu guards dirs and fd: a node samples a run's group while its
	// runner may be removing it.
	mu   sync.Mutex
	dirs []string // one a hierarchy, in the order of m.tree; nil once removed
	fd   int      // v2: the directory, for CLONE_INTO_CGROUP; -1 otherwise
}

// directories are the group's directories; none once it is removed.
func (g *Group) directories() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dirs
}

// NewGroup makes the group of one run, named name (unique among the
// node's runs), with the limits the node enforces of l.
func (m *Manager) NewGroup(name string, l Limits) (*Group, error) {
	if m.closed.Load() {
		return nil, errors.New("cgroup: the node's groups are closed")
	}
	g := &Group{m: m, fd: -1}
	for _, h := range m.tree {
		dir := filepath.Join(h.node, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			_ = g.Remove() // the first error is the one to report
			return nil, fmt.Errorf("cannot make the job's cgroup: %w", err)
		}
		g.dirs = append(g.dirs, dir)
		if err := g.limit(h, dir, l); err != nil {
			_ = g.Remove() // the first error is the one to report
			return nil, err
		}
	}
	if m.version == 2 {
		fd, err := unix.Open(g.dirs[0], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			_ = g.Remove() // the first error is the one to report
			return nil, fmt.Errorf("cannot open the job's cgroup: %w", err)
		}
		g.fd = fd
	}
	return g, nil
}

// limit writes the limits of l the hierarchy h serves into dir.
func (g *Group) limit(h *hierarchy, dir string, l Limits) error {
	m := g.m
	if !m.limits {
		return nil
	}
	if l.CPUShare && h.serves(roleCPUShare) {
		file, value := "cpu.shares", cpuShares(l.Load)
		if m.version == 2 {
			file, value = "cpu.weight", cpuWeight(l.Load)
		}
		if err := writeFile(dir, file, strconv.FormatInt(value, 10)); err != nil {
			return err
		}
	}
	if l.Memory <= 0 || !h.serves(roleMemory) {
		return nil
	}
	limit := strconv.FormatInt(l.Memory, 10)
	if m.version == 2 {
		if err := writeFile(dir, "memory.max", limit); err != nil {
			return err
		}
		// Killed as a whole at the limit: a run with a part killed would
		// go on broken.
		if err := writeFile(dir, "memory.oom.group", "1"); err != nil {
			return err
		}
		if exists(dir, "memory.swap.max") {
			if err := writeFile(dir, "memory.swap.max", "0"); err != nil {
				return err
			}
		}
	} else {
		if err := writeFile(dir, "memory.limit_in_bytes", limit); err != nil {
			return err
		}
		// Memory and swap together no more than memory alone: no swap.
		if exists(dir, "memory.memsw.limit_in_bytes") {
			if err := writeFile(dir, "memory.memsw.limit_in_bytes", limit); err != nil {
				return err
			}
		}
	}
	g.memory = l.Memory
	return nil
}

// MemoryLimit is the memory limit the group holds its run to; 0: none.
func (g *Group) MemoryLimit() int64 { return g.memory }

// Place has a process started with attr born in the group, on cgroup v2;
// on v1 the starting thread must call EnterThread instead.
func (g *Group) Place(attr *syscall.SysProcAttr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, g.fd
	}
}

// EnterThread moves the calling thread into the group, on cgroup v1, so a
// process it forks is born there; leave moves it back to the node's own
// cgroup, and must be called once the process is started. The caller
// must be locked to its thread (runtime.LockOSThread) throughout. On v2 it
// does nothing.
func (g *Group) EnterThread() (leave func() error, err error) {
	if g.m.version != 1 {
		return func() error { return nil }, nil
	}
	tid := strconv.Itoa(unix.Gettid())
	leave = func() error {
		var errs []error
		for _, h := range g.m.tree {
			if err := writeFile(h.own, "tasks", tid); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, dir := range g.directories() {
		if err := writeFile(dir, "tasks", tid); err != nil {
			return nil, errors.Join(err, leave())
		}
	}
	return leave, nil
}

// Sample reads what the group's run has used so far.
func (g *Group) Sample() (Sample, error) {
	s := Sample{OOMKills: -1}
	dirs := g.directories()
	if dirs == nil {
		return s, errors.New("cgroup: the group is removed")
	}
	for i, h := range g.m.tree {
		dir := dirs[i]
		if h.serves(roleCPUTime) {
			cpu, err := g.cpuTime(dir)
			if err != nil {
				return s, err
			}
			s.CPU, s.HasCPU = cpu, true
		}
		if h.serves(roleMemory) {
			if err := g.memorySample(dir, &s); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

func (g *Group) cpuTime(dir string) (time.Duration, error) {
	if g.m.version == 1 {
		ns, err := readInt(dir, "cpuacct.usage")
		return time.Duration(ns), err
	}
	usec, err := readKey(dir, "cpu.stat", "usage_usec")
	return time.Duration(usec) * time.Microsecond, err
}

func (g *Group) memorySample(dir string, s *Sample) error {
	var err error
	s.HasMemory = true
	if g.m.version == 1 {
		if s.Memory, err = readInt(dir, "memory.usage_in_bytes"); err != nil {
			return err
		}
		if s.Peak, err = readInt(dir, "memory.max_usage_in_bytes"); err != nil {
			return err
		}
		s.HasPeak = true
		if kills, err := readKey(dir, "memory.oom_control", "oom_kill"); err == nil {
			s.OOMKills = kills
		}
		s.LimitHits, _ = readInt(dir, "memory.failcnt")
		return nil
	}
	if s.Memory, err = readInt(dir, "memory.current"); err != nil {
		return err
	}
	if exists(dir, "memory.peak") {
		if s.Peak, err = readInt(dir, "memory.peak"); err != nil {
			return err
		}
		s.HasPeak = true
	}
	if kills, err := readKey(dir, "memory.events", "oom_kill"); err == nil {
		s.OOMKills = kills
	}
	return nil
}

// Kill kills every process left in the group and waits, briefly, until
// they have left it.
func (g *Group) Kill() {
	dirs := g.directories()
	if len(dirs) > 0 && g.m.version == 2 && exists(dirs[0], "cgroup.kill") {
		_ = writeFile(dirs[0], "cgroup.kill", "1")
	}
	for _, dir := range dirs {
		killAll(dir)
	}
}

// Remove kills what is left in the group and removes it; the group is of
// no use afterwards.
func (g *Group) Remove() error {
	g.Kill()
	g.mu.Lock()
	dirs := g.dirs
	g.dirs = nil
	if g.fd >= 0 {
		_ = unix.Close(g.fd)
		g.fd = -1
	}
	g.mu.Unlock()
	var errs []error
	for _, dir := range dirs {
		if err := removeDir(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killAll sends SIGKILL to every process in the cgroup dir until none is
// left but zombies, which wait for their parent to reap them (the run's
// leader waits for its runner): for a few seconds at most, as a process
// may fork while it is killed.
func killAll(dir string) {
	for i := range 100 {
		alive := 0
		for _, p := range strings.Fields(readString(filepath.Join(dir, "cgroup.procs"))) {
			pid, err := strconv.Atoi(p)
			if err != nil || pid <= 0 || zombie(pid) {
				continue
			}
			alive++
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if alive == 0 {
			return
		}
		sleepMillis(min(1<<i, 50))
	}
}

// zombie reports whether process pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone
	}
	// The state follows the command name, which ends at the last ')'.
	s := string(b)
	end := strings.LastIndexByte(s, ')')
	return end >= 0 && end+2 < len(s) && (s[end+2] == 'Z' || s[end+2] == 'X')
}

func writeFile(dir, name, value string) error {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0); err != nil {
		return fmt.Errorf("cannot set %s of cgroup %s: %w", name, dir, err)
	}
	return nil
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return !errors.Is(err, fs.ErrNotExist)
}

func readInt(dir, name string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cgroup %s: %s: %w", dir, name, err)
	}
	return v, nil
}

// readKey reads the value of key from a flat-keyed file ("key value" lines).
func readKey(dir, name, key string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("cgroup %s: %s has no %s", dir, name, key)
}

func sleepMillis(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

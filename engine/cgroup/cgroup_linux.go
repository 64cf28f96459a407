//go:build linux

package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Where the kernel describes the process's cgroups and the mounts.
const (
	procSelfCgroup    = "/proc/self/cgroup"
	procSelfMountinfo = "/proc/self/mountinfo"
	unifiedMount      = "/sys/fs/cgroup"
)

// dirPrefix starts the name of every node's directory: jobctl-PID-SEQ-NAME.
const dirPrefix = "jobctl-"

// managers numbers the managers of this process, so nodes of one name in
// one process (tests) never share a directory.
var managers atomic.Int64

// hierarchy is one cgroup hierarchy the node uses: its own cgroup there,
// the node's directory below it, and which controllers it serves.
type hierarchy struct {
	own, node string
	roles     []string // of roleCPUTime, roleCPUShare, roleMemory
}

// The roles a hierarchy may serve.
const (
	roleCPUTime  = "cpu time"
	roleCPUShare = "cpu share"
	roleMemory   = "memory"
)

func (h *hierarchy) serves(role string) bool { return slices.Contains(h.roles, role) }

// Manager makes the groups of one node's runs. Its methods are safe for
// concurrent use.
type Manager struct {
	version int
	limits  bool
	tree    []*hierarchy // v1: one a hierarchy used; v2: one
	support Support
	closed  atomic.Bool
}

// Open finds the cgroups this process may make and makes the node's
// directory in each. It returns an error, and no Manager, when it can make
// none: the node then measures runs by what the kernel accounts of the
// processes they reap. With limits, the groups hold runs to a CPU share
// and a memory limit where the controllers allow; Support says which.
func Open(o Options) (*Manager, error) {
	own, err := readOwnCgroups(procSelfCgroup)
	if err != nil {
		return nil, err
	}
	mounts, err := readCgroupMounts(procSelfMountinfo)
	if err != nil {
		return nil, err
	}
	name := dirName(o.Name)
	if v1 := v1Hierarchies(own, mounts); len(v1) > 0 {
		return openV1(v1, name, o.Limits)
	}
	for _, m := range mounts {
		if m.fstype == "cgroup2" && m.point == unifiedMount {
			return openV2(m.dir(own[""]), name, o.Limits)
		}
	}
	return nil, errors.New("no cgroup hierarchy with the cpu, cpuacct or memory controller is mounted, nor cgroup v2 at " + unifiedMount)
}

// dirName is the node's directory name: its process, a sequence number
// and its name, made safe for a path.
func dirName(node string) string {
	safe := strings.Map(func(r rune) rune {
		if r < 128 && (r == '-' || r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, node)
	if len(safe) > 64 {
		safe = safe[:64]
	}
	return fmt.Sprintf("%s%d-%d-%s", dirPrefix, os.Getpid(), managers.Add(1), safe)
}

// readOwnCgroups maps each controller (and "" for cgroup v2 and named
// hierarchies' names) to this process's cgroup path from /proc/self/cgroup.
func readOwnCgroups(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the process's cgroups: %w", err)
	}
	defer f.Close()
	own := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own, sc.Err()
}

// mount is one cgroup file system mount from /proc/self/mountinfo.
type mount struct {
	root, point, fstype string
	options             []string // super options: the controllers of a v1 hierarchy
}

// dir is where the cgroup at path (as /proc/self/cgroup names it) is in
// this mount.
func (m mount) dir(path string) string {
	if m.root != "/" && strings.HasPrefix(path, m.root) {
		path = strings.TrimPrefix(path, m.root)
	}
	return filepath.Join(m.point, path)
}

func readCgroupMounts(path string) ([]mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the mounts: %w", err)
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root point options [optional…] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 6 || len(fields) < sep+4 {
			continue
		}
		fstype := fields[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		out = append(out, mount{root: unescape(fields[3]), point: unescape(fields[4]), fstype: fstype,
			options: strings.Split(fields[sep+3], ",")})
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes of spaces and the like.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// v1Hierarchies are the v1 hierarchies of the cpuacct, cpu and memory
// controllers, one a mount (cpu and cpuacct are often mounted together),
// with the process's own cgroup in each.
func v1Hierarchies(own map[string]string, mounts []mount) []*hierarchy {
	var out []*hierarchy
	for _, want := range []struct{ controller, role string }{
		{"cpuacct", roleCPUTime}, {"cpu", roleCPUShare}, {"memory", roleMemory},
	} {
		path, ok := own[want.controller]
		if !ok {
			continue
		}
		for _, m := range mounts {
			if m.fstype != "cgroup" || !slices.Contains(m.options, want.controller) {
				continue
			}
			dir := m.dir(path)
			if i := slices.IndexFunc(out, func(h *hierarchy) bool { return h.own == dir }); i >= 0 {
				out[i].roles = append(out[i].roles, want.role)
			} else {
				out = append(out, &hierarchy{own: dir, roles: []string{want.role}})
			}
			break
		}
	}
	return out
}

// openV1 makes the node's directory in each v1 hierarchy it may write to.
func openV1(tree []*hierarchy, name string, limits bool) (*Manager, error) {
	m := &Manager{version: 1, limits: limits}
	m.support.Version = 1
	var failed []string
	for _, h := range tree {
		removeStale(h.own)
		h.node = filepath.Join(h.own, name)
		if err := os.Mkdir(h.node, 0o755); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%s): %v", strings.Join(h.roles, ", "), h.own, errors.Unwrap(err)))
			continue
		}
		m.tree = append(m.tree, h)
	}
	if len(m.tree) == 0 {
		return nil, fmt.Errorf("cannot make cgroups: %s", strings.Join(failed, "; "))
	}
	m.support.Missing = failed
	m.fillSupport(func(h *hierarchy) bool {
		_, err := os.Stat(filepath.Join(h.node, "memory.memsw.limit_in_bytes"))
		return err == nil
	})
	return m, nil
}

// fillSupport says what the hierarchies serve; noSwap tells whether the
// memory hierarchy can keep a group from swap.
func (m *Manager) fillSupport(noSwap func(*hierarchy) bool) {
	s := &m.support
	for _, h := range m.tree {
		s.CPU = s.CPU || h.serves(roleCPUTime)
		s.Memory = s.Memory || h.serves(roleMemory)
		s.CPUShare = s.CPUShare || (m.limits && h.serves(roleCPUShare))
		if m.limits && h.serves(roleMemory) {
			s.MemoryLimit, s.NoSwap = true, noSwap(h)
		}
	}
}

// openV2 makes the node's directory below own, the process's cgroup in the
// unified hierarchy, with the cpu and memory controllers enabled for its
// groups where they are delegated to own.
func openV2(own, name string, limits bool) (*Manager, error) {
	m := &Manager{version: 2, limits: limits}
	m.support.Version = 2
	if !kernelAtLeast(5, 7) {
		return nil, errors.New("cgroup v2 needs Linux 5.7 or later to start a process inside a group")
	}
	removeStale(own)
	available := strings.Fields(readString(filepath.Join(own, "cgroup.controllers")))
	var want []string
	for _, c := range []string{"cpu", "memory"} {
		if slices.Contains(available, c) {
			want = append(want, c)
		} else {
			m.support.Missing = append(m.support.Missing, fmt.Sprintf("the %s controller is not delegated to %s", c, own))
		}
	}
	if len(want) > 0 {
		if err := enableControllers(own, want); err != nil {
			m.support.Missing = append(m.support.Missing, err.Error())
			want = nil
		}
	}
	h := &hierarchy{own: own, node: filepath.Join(own, name), roles: []string{roleCPUTime}}
	if err := os.Mkdir(h.node, 0o755); err != nil {
		return nil, fmt.Errorf("cannot make cgroups: %v", err)
	}
	if len(want) > 0 {
		if err := writeControllers(h.node, want); err != nil {
			m.support.Missing = append(m.support.Missing, err.Error())
			want = nil
		}
	}
	for _, c := range want {
		h.roles = append(h.roles, map[string]string{"cpu": roleCPUShare, "memory": roleMemory}[c])
	}
	m.tree = []*hierarchy{h}
	m.fillSupport(func(*hierarchy) bool { return true }) // memory.swap.max where swap exists
	return m, nil
}

// enableControllers enables controllers for the children of own. A cgroup
// with processes of its own cannot (the rule of no internal processes),
// unless it is the root: its processes then move to a leaf of their own,
// as a service with a delegated cgroup is expected to do.
func enableControllers(own string, controllers []string) error {
	err := writeControllers(own, controllers)
	if err == nil || !errors.Is(err, unix.EBUSY) {
		return err
	}
	leaf := filepath.Join(own, "jobctl-node")
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot make a leaf for the node's own processes in %s: %w", own, err)
	}
	for _, pid := range strings.Fields(readString(filepath.Join(own, "cgroup.procs"))) {
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(pid), 0); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("cannot move process %s of %s into %s: %w", pid, own, leaf, err)
		}
	}
	return writeControllers(own, controllers)
}

func writeControllers(dir string, controllers []string) error {
	var b strings.Builder
	for _, c := range controllers {
		b.WriteString(" +" + c)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.TrimSpace(b.String())), 0); err != nil {
		return fmt.Errorf("cannot enable %s for the groups below %s: %w", strings.Join(controllers, " and "), dir, err)
	}
	return nil
}

// removeStale removes what nodes that are gone left below dir: the
// directories of a process that no longer exists, with their groups, and
// kills whatever still runs in those groups (a run of a dead node must not
// go on).
func removeStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), dirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || processExists(pid) {
			continue
		}
		node := filepath.Join(dir, e.Name())
		groups, _ := os.ReadDir(node)
		for _, g := range groups {
			if g.IsDir() {
				gdir := filepath.Join(node, g.Name())
				killAll(gdir)
				_ = removeDir(gdir) // a sweep of leftovers: what stays is tried at the next start
			}
		}
		_ = removeDir(node)
	}
}

func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Support says what the node's cgroups measure and enforce.
func (m *Manager) Support() Support {
	s := m.support
	s.Missing = slices.Clone(s.Missing)
	return s
}

// Close removes the node's directories; groups still in them are emptied
// and removed first.
func (m *Manager) Close() error {
	if !m.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	for _, h := range m.tree {
		groups, _ := os.ReadDir(h.node)
		for _, g := range groups {
			if g.IsDir() {
				dir := filepath.Join(h.node, g.Name())
				killAll(dir)
				_ = removeDir(dir) // a group that stays keeps its node's directory, whose error says so
			}
		}
		if err := removeDir(h.node); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kernelAtLeast reports whether the running kernel is at least major.minor.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	release := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return maj > major || (maj == major && min >= minor)
}

// readString reads a small control file; "" when it cannot.
func readString(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// removeDir removes a group's directory. Processes that were just killed
// may still be leaving it; it tries again for a little while.
func removeDir(dir string) error {
	var err error
	for i := range 50 {
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		sleepMillis(min(1<<i, 50))
	}
	return fmt.Errorf("cannot remove cgroup %s: %w", dir, err)
}

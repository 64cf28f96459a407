package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// binary is the jobctl built once for all end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jobctl-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "jobctl")
	// -trimpath, as `make build` and TestVersionFromTheBuild build it: the
	// packages compiled here are then the ones those builds find in the
	// cache, rather than a second compilation of the whole tree.
	build := exec.Command("go", "build", "-trimpath", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building jobctl:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is one database shared by the nodes and commands of a test.
type cluster struct {
	t   *testing.T
	dsn string
}

// sqliteCluster uses a fresh SQLite file.
func sqliteCluster(t *testing.T) *cluster {
	t.Helper()
	return &cluster{t: t, dsn: "sqlite:" + filepath.Join(t.TempDir(), "jobctl.db")}
}

// postgresCluster uses a fresh PostgreSQL database, dropped afterwards. An
// unreachable server fails the test: these tests must run for real.
func postgresCluster(t *testing.T) *cluster {
	t.Helper()
	base := os.Getenv("JOBCTL_TEST_POSTGRES")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	name := "jobctl_e2e_" + randomSuffix()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("postgres is required for this test (set JOBCTL_TEST_POSTGRES): %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("JOBCTL_TEST_POSTGRES: %v", err)
	}
	u.Path = "/" + name
	return &cluster{t: t, dsn: u.String()}
}

// mysqlCluster uses a fresh MariaDB/MySQL database, dropped afterwards.
// An unreachable server fails the test.
func mysqlCluster(t *testing.T) *cluster {
	t.Helper()
	base := os.Getenv("JOBCTL_TEST_MYSQL")
	if base == "" {
		base = "mysql://root@127.0.0.1:3306/test"
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("JOBCTL_TEST_MYSQL: %v", err)
	}
	pass, _ := u.User.Password()
	admin, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", u.User.Username(), pass, u.Host))
	if err != nil {
		t.Fatalf("mysql: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	name := "jobctl_e2e_" + randomSuffix()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("MariaDB is required for this test (set JOBCTL_TEST_MYSQL): %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name) })
	u.Path = "/" + name
	return &cluster{t: t, dsn: u.String()}
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// result is one finished jobctl command.
type result struct {
	stdout, stderr string
	code           int
}

// run runs jobctl against the cluster's database.
func (c *cluster) run(args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "JOBCTL_DB="+c.dsn, "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("jobctl %v: %v", args, err)
	}
	return r
}

// ok runs jobctl and fails the test unless it exits 0.
func (c *cluster) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("jobctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// submit submits a job and returns its id.
func (c *cluster) submit(args ...string) string {
	c.t.Helper()
	return jobID(c.ok(append([]string{"submit"}, args...)...))
}

// jobID is the id submit prints on the first line of its stdout.
func jobID(stdout string) string {
	return strings.TrimSpace(strings.SplitN(stdout, "\n", 2)[0])
}

// pids waits until a job has written its file of pids (the job writes it
// whole, with a rename) and returns them.
func (c *cluster) pids(path string, want int) []int {
	c.t.Helper()
	var pids []int
	c.eventually(10*time.Second, "the job to write "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				pids = append(pids, pid)
			}
		}
		return len(pids) == want
	})
	return pids
}

// jobView is the part of `show -o json` the tests read.
type jobView struct {
	ID         int64      `json:"id"`
	Type       string     `json:"type"`
	Status     string     `json:"status"`
	Node       string     `json:"node"`
	Load       float64    `json:"load"`
	Attempt    int        `json:"attempt"`
	ExitCode   *int       `json:"exit_code"`
	Message    string     `json:"message"`
	Progress   int        `json:"progress"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

func (c *cluster) show(id string) jobView {
	c.t.Helper()
	var j jobView
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &j); err != nil {
		c.t.Fatalf("show %s: %v", id, err)
	}
	return j
}

type nodeView struct {
	Name           string  `json:"name"`
	State          string  `json:"state"`
	MaxLoad        float64 `json:"max_load"`
	Load           float64 `json:"load"`
	Running        int     `json:"running"`
	Dispatcher     bool    `json:"dispatcher"`
	MaxLoadAvg     float64 `json:"max_load_avg"`
	ReservedMemory int64   `json:"reserved_memory"`
	Overloaded     bool    `json:"overloaded"`
	OverloadReason string  `json:"overload_reason"`
	Maintenance    bool    `json:"maintenance"`
	Note           string  `json:"note"`
}

func (c *cluster) nodes() []nodeView {
	c.t.Helper()
	var ns []nodeView
	if err := json.Unmarshal([]byte(c.ok("nodes", "-o", "json")), &ns); err != nil {
		c.t.Fatalf("nodes: %v", err)
	}
	return ns
}

type leaseView struct {
	Owner string `json:"owner"`
	Valid bool   `json:"valid"`
}

func (c *cluster) lease() leaseView {
	c.t.Helper()
	var l leaseView
	if err := json.Unmarshal([]byte(c.ok("lease", "-o", "json")), &l); err != nil {
		c.t.Fatalf("lease: %v", err)
	}
	return l
}

// eventually polls cond until it holds, and fails the test if it does not
// within the limit.
func (c *cluster) eventually(within time.Duration, what string, cond func() bool) {
	c.t.Helper()
	waitfor.Until(c.t, within, what, cond)
}

// waitStatus waits until job id has the given status.
func (c *cluster) waitStatus(id, status string, within time.Duration) jobView {
	c.t.Helper()
	var j jobView
	c.eventually(within, "job "+id+" to become "+status+" (is "+j.Status+")", func() bool {
		j = c.show(id)
		return j.Status == status
	})
	return j
}

// gate is a file jobs wait for: they run until the test opens it, so what
// the test looks at while they run does not depend on how fast this machine
// is today.
type gate string

func newGate(t *testing.T) gate { return gate(filepath.Join(t.TempDir(), "open")) }

// script is a shell command that waits until the gate is open.
func (g gate) script() string {
	return `while [ ! -e '` + string(g) + `' ]; do sleep 0.05; done`
}

func (g gate) open(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(string(g), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// node is one `jobctl serve` process.
type node struct {
	name string
	addr string // host:port it listens on
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

// serve starts a node and waits until it is registered ONLINE.
//
// The load-average gate is off: on a busy test machine (other builds, the
// load the tests make themselves) it would hold nodes back at random. A
// test about the gate gives --max-load-avg or --reserved-memory in args,
// which come later and so win.
func (c *cluster) serve(name string, args ...string) *node {
	c.t.Helper()
	return c.serveDB(c.dsn, name, args...)
}

// serveDB starts a node that reaches the cluster's database at dsn (the
// address of a proxy in front of it, say).
func (c *cluster) serveDB(dsn, name string, args ...string) *node {
	c.t.Helper()
	return c.serveWith(name, withDB(dsn), args...)
}

// withDB prepares a node's command to work on the database dsn.
func withDB(dsn string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) { cmd.Env = append(os.Environ(), "JOBCTL_DB="+dsn) }
}

// serveWith starts a node whose command prepare sets up: its environment
// (the database) at least, and maybe its user. The load-average gate is
// off: the tests that are not about it must not depend on how busy this
// machine is.
func (c *cluster) serveWith(name string, prepare func(*exec.Cmd), args ...string) *node {
	c.t.Helper()
	return c.startNode(name, prepare, append([]string{"--max-load-avg", "off"}, args...))
}

// serveGated starts a node with the load-average gate as serve sets it by
// default, for the tests about it; loadavg is the load average the node
// reads, written to a file in the format of /proc/loadavg, so the test does
// not depend on how busy this machine is.
func (c *cluster) serveGated(name string, loadavg float64, args ...string) *node {
	c.t.Helper()
	file := filepath.Join(c.t.TempDir(), "loadavg")
	if err := os.WriteFile(file, fmt.Appendf(nil, "%.2f %.2f %.2f 3/812 4711\n", loadavg, loadavg, loadavg), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return c.startNode(name, withDB(c.dsn), append([]string{"--loadavg-file", file}, args...))
}

// startNode starts a node with the test settings and args, its command set
// up by prepare.
func (c *cluster) startNode(name string, prepare func(*exec.Cmd), args []string) *node {
	c.t.Helper()
	addr := "127.0.0.1:" + freePort(c.t)
	all := append([]string{"serve", "--node", name, "--listen", addr,
		"--dispatch-interval", "200ms", "--heartbeat-interval", "1s", "--poll-interval", "100ms",
		"--log-level", "debug"}, args...)
	cmd := exec.Command(binary, all...)
	prepare(cmd)
	n := &node{name: name, addr: addr, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = n.log, n.log
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(n.done) }()
	c.t.Cleanup(func() {
		n.stop(c.t, syscall.SIGKILL)
		if c.t.Failed() {
			c.t.Logf("node %s log:\n%s", name, n.log.String())
		}
	})
	c.eventually(20*time.Second, "node "+name+" online", func() bool {
		select {
		case <-n.done:
			c.t.Fatalf("node %s exited early:\n%s", name, n.log.String())
		default:
		}
		// Until the node has created the database, nodes finds none
		// (exit 3) rather than creating it.
		r := c.run("nodes", "-o", "json")
		if r.code == 3 {
			return false
		}
		var ns []nodeView
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ns) != nil {
			c.t.Fatalf("jobctl nodes -o json: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		for _, nv := range ns {
			if nv.Name == name && nv.State == "ONLINE" {
				return true
			}
		}
		return false
	})
	return n
}

// stop signals the node and waits for it to exit.
func (n *node) stop(t *testing.T, sig syscall.Signal) {
	select {
	case <-n.done:
		return
	default:
	}
	_ = n.cmd.Process.Signal(sig)
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		t.Errorf("node %s did not stop on %v", n.name, sig)
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

// dispatchRounds reads from the node's /metrics how many dispatch rounds it
// has run as lease holder.
func (n *node) dispatchRounds(t *testing.T) int {
	t.Helper()
	resp, err := http.Get("http://" + n.addr + "/metrics")
	if err != nil {
		t.Fatalf("node %s /metrics: %v", n.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("node %s /metrics: %s, %v", n.name, resp.Status, err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "jobctl_dispatch_rounds_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("node %s /metrics: %q: %v", n.name, line, err)
			}
			return int(f)
		}
	}
	t.Fatalf("node %s /metrics has no jobctl_dispatch_rounds_total:\n%s", n.name, body)
	return 0
}

// waitRounds waits until the node has run n more dispatch rounds than it
// had when called; rounds are the clock of dispatch, unlike wall time on a
// loaded machine.
func (c *cluster) waitRounds(n *node, rounds int) {
	c.t.Helper()
	start := n.dispatchRounds(c.t)
	c.eventually(60*time.Second, fmt.Sprintf("%d dispatch rounds on node %s", rounds, n.name), func() bool {
		return n.dispatchRounds(c.t) >= start+rounds
	})
}

// freePort is a loopback port nothing listens on now, for a node to take.
func freePort(t *testing.T) string {
	t.Helper()
	// Below the kernel's range of ephemeral ports: the tests' processes
	// take the local ports of their outgoing connections from that range,
	// and one of them could hold a port picked there by the time the node
	// binds it ("address already in use").
	first := ephemeralPortsFrom()
	for range 100 {
		port := strconv.Itoa(lowestTestPort + mrand.IntN(first-lowestTestPort))
		if l, err := net.Listen("tcp", "127.0.0.1:"+port); err == nil {
			l.Close()
			return port
		}
	}
	t.Fatalf("no free port on the loopback between %d and %d", lowestTestPort, first)
	return ""
}

// lowestTestPort is the lowest port freePort picks.
const lowestTestPort = 10000

// ephemeralPortsFrom is the first port of the kernel's ephemeral range,
// 32768 where it cannot be read.
func ephemeralPortsFrom() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > lowestTestPort+1000 {
				return n
			}
		}
	}
	return 32768
}

// syncBuffer collects a process's output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// processAlive reports whether a process with this pid exists and is not a
// zombie (a killed orphan stays one where nothing reaps it).
func processAlive(pid int) bool {
	s := processState(pid)
	return s != "" && s != "Z" && s != "X"
}

// processState is the state letter of a process in /proc (R, S, T for
// stopped, Z…), or "" when there is no such process.
func processState(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The state follows the command name, which is in parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	if fields := strings.Fields(string(rest)); len(fields) > 0 {
		return fields[0]
	}
	return ""
}

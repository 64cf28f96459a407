package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// chaosCluster is a cluster whose nodes a fault driver kills, freezes and
// cuts off from the database while they work. Its methods report errors
// instead of failing the test, so they can run on the driver's goroutine.
type chaosCluster struct {
	t       *testing.T
	c       *cluster
	backend string   // "postgres" or "mysql"
	db      *sql.DB  // straight to the database, for the samplers
	args    []string // every node's serve flags
	nodes   []*chaosNode
}

// chaosNode is one node name and the processes that ran under it, each
// reaching the database through the node's own proxy.
type chaosNode struct {
	name     string
	addr     string
	proxy    *dbProxy
	stateDir string

	mu      sync.Mutex
	proc    *node   // the process running under the name now
	history []*node // every process that ran under the name, oldest first
}

func newChaosCluster(t *testing.T, c *cluster, backend string, names []string, args []string) *chaosCluster {
	t.Helper()
	cc := &chaosCluster{t: t, c: c, backend: backend, db: chaosOpenDB(t, backend, c.dsn), args: args}
	c.ok("db", "migrate")
	for _, name := range names {
		p := newDBProxy(t, hostPort(t, c.dsn))
		n := &chaosNode{name: name, addr: "127.0.0.1:" + freePort(t), proxy: p,
			stateDir: filepath.Join(t.TempDir(), name)}
		cc.nodes = append(cc.nodes, n)
		t.Cleanup(func() { n.killAll() })
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range cc.nodes {
				n.logTail(t)
			}
		}
	})
	for _, n := range cc.nodes {
		if err := cc.start(n, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return cc
}

// chaosOpenDB opens the database of dsn for the test's own queries.
func chaosOpenDB(t *testing.T, backend, dsn string) *sql.DB {
	t.Helper()
	driver, source := "postgres", dsn
	if backend == "mysql" {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		pass, _ := u.User.Password()
		driver = "mysql"
		source = fmt.Sprintf("%s:%s@tcp(%s)%s?parseTime=true", u.User.Username(), pass, u.Host, u.Path)
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	return db
}

// placeholder is the first bind parameter in the backend's SQL.
func (cc *chaosCluster) placeholder() string {
	if cc.backend == "mysql" {
		return "?"
	}
	return "$1"
}

func (cc *chaosCluster) node(name string) *chaosNode {
	for _, n := range cc.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// start runs a new process under the node's name, through its proxy, and
// waits until it serves and its row is ONLINE.
func (cc *chaosCluster) start(n *chaosNode, within time.Duration) error {
	all := append([]string{"serve", "--node", n.name, "--listen", n.addr, "--state-dir", n.stateDir,
		"--poll-interval", "100ms", "--max-load-avg", "off", "--log-level", "debug"}, cc.args...)
	cmd := exec.Command(binary, all...)
	cmd.Env = append(os.Environ(), "JOBCTL_DB="+n.proxy.DSN(cc.c.dsn))
	p := &node{name: n.name, addr: n.addr, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	n.mu.Lock()
	n.proc = p
	n.history = append(n.history, p)
	n.mu.Unlock()

	exited := func() bool {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	switch up := waitfor.Within(within, func() bool { return exited() || cc.serving(n) }); {
	case exited():
		return fmt.Errorf("node %s exited as it started: %s", n.name, lastLines(p.log.String(), 3))
	case !up:
		return fmt.Errorf("node %s not ONLINE and serving %s after it started", n.name, within)
	}
	return nil
}

// serving reports whether the node's process answers /healthz and its row
// is ONLINE. The address is the node's own, so a dead process's answer
// cannot be mistaken for the new one's.
func (cc *chaosCluster) serving(n *chaosNode) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.addr+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	var state string
	err = cc.db.QueryRowContext(ctx, "SELECT state FROM nodes WHERE name = "+cc.placeholder(), n.name).Scan(&state)
	return err == nil && state == "ONLINE"
}

// restart starts the node again right after a crash. A node that refuses
// to start under its own name is an error the caller reports; it is then
// started again until it comes up, so the rest of the run still tests the
// other guarantees.
func (cc *chaosCluster) restart(n *chaosNode, bound time.Duration) (firstErr error) {
	deadline := time.Now().Add(bound)
	for {
		err := cc.start(n, 20*time.Second)
		if err == nil {
			return firstErr
		}
		if firstErr == nil {
			firstErr = err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%v; and it did not come up within %s of retries: %v", firstErr, bound, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// signal sends sig to the node's current process; for SIGKILL it waits
// until the process is gone.
func (n *chaosNode) signal(sig syscall.Signal) error {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return fmt.Errorf("node %s has no process", n.name)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("node %s: %v: %w", n.name, sig, err)
	}
	if sig == syscall.SIGKILL {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("node %s did not die of SIGKILL", n.name)
		}
	}
	return nil
}

func (n *chaosNode) alive() bool {
	n.mu.Lock()
	p := n.proc
	n.mu.Unlock()
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (n *chaosNode) killAll() {
	n.mu.Lock()
	procs := append([]*node(nil), n.history...)
	n.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail logs the end of each process's output: the whole of it would be
// megabytes for a run of thousands of jobs.
func (n *chaosNode) logTail(t *testing.T) {
	n.mu.Lock()
	procs := append([]*node(nil), n.history...)
	n.mu.Unlock()
	shown := 0
	for i := len(procs) - 1; i >= 0 && shown < 4; i-- {
		log := procs[i].log.String()
		if strings.Count(log, "\n") < 5 {
			continue // one that exited as it started: its error is in the test's log
		}
		shown++
		t.Logf("node %s, process %d of %d, last lines of its log:\n%s", n.name, i+1, len(procs), lastLines(log, 40))
	}
}

// lapseLine is the start of what a node logs when it could not record its
// liveness within its node lease and stopped its runs; lapseEndLine what it
// logs once it records it again; logTime the time of any line.
var (
	lapseLine    = regexp.MustCompile(`^time=(\S+) .*msg="could not record liveness within the node lease`)
	lapseEndLine = regexp.MustCompile(`^time=\S+ .*msg="recorded liveness again; taking work again"`)
	// lapseStopLine is a run the node stopped as it started, for a lapse.
	lapseStopLine = regexp.MustCompile(`^time=\S+ .*msg="stopped a run as it started: liveness lapsed`)
	logTime       = regexp.MustCompile(`^time=(\S+) `)
)

// lapses are the times, from their logs, that nodes stopped their own runs
// because they could not record their liveness in time: on a busy machine a
// starved node may, with no fault injected. Such a stop explains a run's
// end as a fault on its node does; the checks of overlaps and order hold
// all the same.
func (cc *chaosCluster) lapses() []fault {
	var out []fault
	for _, n := range cc.nodes {
		n.mu.Lock()
		procs := append([]*node(nil), n.history...)
		n.mu.Unlock()
		for _, p := range procs {
			out = append(out, lapsesIn(n.name, p.log.String())...)
		}
	}
	return out
}

// lapsesIn reads the lapses of node name from one process's log. A lapse
// lasts until the node records its liveness again, or its log ends: a run
// that starts on the node meanwhile was taken before the lapse (the node
// declines work while it lasts), and the fence stops it as it starts. A
// run taken before the lapse may start only after the lapse is over (its
// start was in flight while the node was frozen); the fence stops it too,
// and the lapse lasts until the node says so.
func lapsesIn(name, log string) []fault {
	var out []fault
	open := false
	for line := range strings.Lines(log) {
		m := logTime.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		switch {
		case lapseLine.MatchString(line):
			out = append(out, fault{Kind: faultLapse, Node: name, Start: at.UnixNano(), End: at.UnixNano()})
			open = true
		case lapseStopLine.MatchString(line) && len(out) > 0:
			out[len(out)-1].End = at.UnixNano()
		case open:
			out[len(out)-1].End = at.UnixNano()
			open = !lapseEndLine.MatchString(line)
		}
	}
	return out
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, "\n")
}

// jobctl runs a command against the database, straight, not through a
// proxy, and returns its stdout.
func (cc *chaosCluster) jobctl(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "JOBCTL_DB="+cc.c.dsn, "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("jobctl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

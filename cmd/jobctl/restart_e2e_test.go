package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitRegistered waits until the node's own process has registered (its
// log says so): the row of a killed predecessor may still read ONLINE.
func (c *cluster) waitRegistered(n *node) {
	c.t.Helper()
	c.eventually(20*time.Second, "node "+n.name+" to register", func() bool {
		select {
		case <-n.done:
			c.t.Fatalf("node %s exited:\n%s", n.name, n.log.String())
		default:
		}
		return strings.Contains(n.log.String(), "node online")
	})
}

// start starts `jobctl serve` under name and returns at once, without
// waiting for it to register (serve does).
func (c *cluster) start(name string) *node {
	c.t.Helper()
	addr := "127.0.0.1:" + freePort(c.t)
	cmd := exec.Command(binary, "serve", "--node", name, "--listen", addr, "--dispatch-interval", "200ms",
		"--max-load-avg", "off", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "JOBCTL_DB="+c.dsn)
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
	return n
}

// A node killed with SIGKILL and started again at once under its name
// takes the name over at once: its former process on this host is gone.
func TestNodeRestartedRightAfterSIGKILLTakesItsNameAtOnce(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("phoenix")
	c.waitRegistered(n)
	for i := range 10 {
		n.stop(t, syscall.SIGKILL)
		n = c.serve("phoenix")
		c.waitRegistered(n)
		if strings.Contains(n.log.String(), "already online") {
			t.Fatalf("restart %d was refused:\n%s", i+1, n.log.String())
		}
	}
}

// A second `jobctl serve` under the name of a live node exits 1 and says
// which process holds the name and how long until it is free.
func TestSecondServeUnderALiveNodesNameExits1(t *testing.T) {
	t.Parallel()
	c := mysqlCluster(t)
	first := c.serve("taken")
	c.waitRegistered(first)
	r := c.run("serve", "--node", "taken", "--listen", "127.0.0.1:"+freePort(t), "--max-load-avg", "off")
	if r.code != 1 {
		t.Fatalf("second serve exited %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	host, _ := os.Hostname()
	for _, want := range []string{"already online", `"taken"`, "pid " + strconv.Itoa(first.cmd.Process.Pid), "host " + host,
		"until the name is free"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
		}
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); !strings.HasPrefix(lines[len(lines)-1], "jobctl: node name already online") {
		t.Errorf("the last line of stderr is not the refusal:\n%s", r.stderr)
	}
	select {
	case <-first.done:
		t.Fatal("the live node stopped")
	default:
	}
}

// leaseTermView is the part of `lease -o json` this file reads.
type leaseTermView struct {
	Owner string `json:"owner"`
	Valid bool   `json:"valid"`
	Term  int64  `json:"term"`
}

// startView is the part of `show -o json` that says who started the job.
type startView struct {
	Status     string `json:"status"`
	Node       string `json:"node"`
	Attempt    int    `json:"attempt"`
	Dispatcher string `json:"dispatcher"`
	LeaseTerm  int64  `json:"lease_term"`
}

// termSampler records every lease term `lease -o json` shows while a test
// runs.
type termSampler struct {
	mu    sync.Mutex
	seen  map[leaseTermView]bool
	stop  chan struct{}
	ended chan struct{}
}

func (c *cluster) sampleLease() *termSampler {
	s := &termSampler{seen: map[leaseTermView]bool{}, stop: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		for {
			var l leaseTermView
			if out := c.run("lease", "-o", "json"); out.code == 0 && json.Unmarshal([]byte(out.stdout), &l) == nil && l.Valid {
				s.mu.Lock()
				s.seen[leaseTermView{Owner: l.Owner, Valid: true, Term: l.Term}] = true
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	c.t.Cleanup(s.end)
	return s
}

func (s *termSampler) end() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.ended
}

func (s *termSampler) saw(owner string, term int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[leaseTermView{Owner: owner, Valid: true, Term: term}]
}

func (c *cluster) showStart(id string) startView {
	c.t.Helper()
	var v startView
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &v); err != nil {
		c.t.Fatalf("show %s: %v", id, err)
	}
	return v
}

// A job running on a worker killed with SIGKILL runs again once the
// worker's node lease (2s here) has passed, exactly once more, started by
// the lease holder under the term `lease -o json` showed.
func TestJobOfAKilledWorkerRunsAgainAfterItsNodeLease(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	leases := c.sampleLease()
	c.serve("holder", "--exec")
	c.ok("nodes", "maintenance", "holder", "on") // the first run must land on the worker
	worker := c.serve("worker", "--exec", "--dispatch-interval", "0", "--node-lease", "2s")

	base := filepath.Join(t.TempDir(), "run")
	g := newGate(t)
	id := c.submit("--", "sh", "-c", `echo $$ > "$1.$JOBCTL_ATTEMPT.tmp"; mv "$1.$JOBCTL_ATTEMPT.tmp" "$1.$JOBCTL_ATTEMPT"; `+
		g.script()+`; echo "$JOBCTL_NODE" >> "$1.done"`, "sh", base)
	if j := c.waitStatus(id, "RUNNING", 20*time.Second); j.Node != "worker" {
		t.Fatalf("the job runs on %q, want worker", j.Node)
	}
	first := c.showStart(id)
	if first.Dispatcher != "holder" || first.LeaseTerm == 0 {
		t.Errorf("attempt 1 was started under %q term %d, want holder's term", first.Dispatcher, first.LeaseTerm)
	}
	pid := c.pids(base+".1", 1)[0]

	worker.stop(t, syscall.SIGKILL)
	c.eventually(20*time.Second, "the job's process to die with its node", func() bool { return !processAlive(pid) })
	c.ok("nodes", "maintenance", "holder", "off")
	var again startView
	c.eventually(60*time.Second, "the job to run again", func() bool {
		again = c.showStart(id)
		return again.Attempt == 2 && again.Status == "RUNNING"
	})
	g.open(t)
	c.ok("wait", id, "--timeout", "60s")
	leases.end()

	j := c.show(id)
	if j.Status != "FINISHED" || j.Node != "holder" || j.Attempt != 2 {
		t.Fatalf("job = %+v, want FINISHED on holder at attempt 2", j)
	}
	done, _ := os.ReadFile(base + ".done")
	if got := strings.Fields(string(done)); len(got) != 1 || got[0] != "holder" {
		t.Fatalf("the job completed %d times (%q), want once, on holder", len(got), got)
	}
	if again.Dispatcher != "holder" || !leases.saw(again.Dispatcher, again.LeaseTerm) {
		t.Errorf("attempt 2 was started under %q term %d, which lease -o json never showed (saw %v)",
			again.Dispatcher, again.LeaseTerm, leases.seen)
	}
	if !leases.saw(first.Dispatcher, first.LeaseTerm) {
		t.Errorf("attempt 1 was started under %q term %d, which lease -o json never showed (saw %v)",
			first.Dispatcher, first.LeaseTerm, leases.seen)
	}
}

// Two processes restarting a killed node under its name at once: exactly
// one takes it, the other is refused.
func TestTwoRacingRestartsTakeTheNameOnce(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	n := c.serve("contested")
	c.waitRegistered(n)
	n.stop(t, syscall.SIGKILL)
	type outcome struct{ log string }
	results := make(chan outcome, 2)
	var procs []*node
	for range 2 {
		p := c.start("contested")
		procs = append(procs, p)
		go func() {
			<-p.done
			results <- outcome{log: p.log.String()}
		}()
	}
	// The loser exits; the winner keeps serving.
	var lost outcome
	select {
	case lost = <-results:
	case <-time.After(60 * time.Second):
		t.Fatalf("both racing restarts still serve:\n%s\n%s", procs[0].log.String(), procs[1].log.String())
	}
	if !strings.Contains(lost.log, "already online") {
		t.Fatalf("a racing restart exited without being refused:\n%s", lost.log)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			c.waitRegistered(p)
			return
		}
	}
	t.Fatal("no racing restart kept the name")
}

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outageNodeArgs start a node whose node lease outlasts the outages of
// these tests, so it never fences itself off and only the keeping of
// results is at stake.
func outageNodeArgs(stateDir string) []string {
	return []string{"--exec", "--node-lease", "60s", "--state-dir", stateDir}
}

// onceJob submits a job that appends its attempt to the file runs each time
// it runs, then waits for gate g.
func onceJob(c *cluster, runs string, g gate) string {
	c.t.Helper()
	id := c.submit("--", "sh", "-c", `echo "$JOBCTL_ATTEMPT" >> "$1"; `+g.script(), "sh", runs)
	c.waitStatus(id, "RUNNING", 20*time.Second)
	c.eventually(20*time.Second, "the job to start", func() bool {
		b, _ := os.ReadFile(runs)
		return len(b) > 0
	})
	return id
}

// ranOnce fails the test unless the job ran once, at attempt 1.
func ranOnce(t *testing.T, runs string) {
	t.Helper()
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); len(got) != 1 || got[0] != "1" {
		t.Errorf("the job ran at attempts %q, want once, at attempt 1", got)
	}
}

// keptResults lists the results a node keeps on disk in its state directory.
func keptResults(t *testing.T, stateDir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(stateDir, "results", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A job that ends while its node cannot reach the database keeps its
// result until the database is back: it ends FINISHED at its first
// attempt, and runs once.
func TestAResultOutlastsADatabaseOutage(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	p := newDBProxy(t, hostPort(t, c.dsn))
	state := t.TempDir()
	n := c.serveDB(p.DSN(c.dsn), "cut", outageNodeArgs(state)...)
	runs := filepath.Join(t.TempDir(), "runs")
	g := newGate(t)
	id := onceJob(c, runs, g)

	p.Cut()
	g.open(t)
	c.eventually(60*time.Second, "the node to say it cannot record the result", func() bool {
		return strings.Contains(n.log.String(), "cannot record job results")
	})
	c.eventually(20*time.Second, "the result on disk", func() bool { return len(keptResults(t, state)) == 1 })
	if j := c.show(id); j.Status != "RUNNING" {
		t.Fatalf("during the outage the job is %s, want RUNNING: nothing reached the database", j.Status)
	}

	p.Restore()
	j := c.waitStatus(id, "FINISHED", 60*time.Second)
	if j.Attempt != 1 || j.Node != "cut" {
		t.Errorf("job = %+v, want FINISHED on cut at attempt 1", j)
	}
	ranOnce(t, runs)
	c.eventually(20*time.Second, "the node to say results get through again", func() bool {
		return strings.Contains(n.log.String(), "recording job results again")
	})
	c.eventually(20*time.Second, "the recorded result to leave the disk", func() bool { return len(keptResults(t, state)) == 0 })
}

// A node killed while the database was away records at its next start the
// result it kept on disk, before it recovers its jobs: the job ends
// FINISHED at its first attempt, and runs once.
func TestAResultOutlastsItsNodeKilledDuringAnOutage(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	p := newDBProxy(t, hostPort(t, c.dsn))
	state := t.TempDir()
	dsn := p.DSN(c.dsn)
	n := c.serveDB(dsn, "phoenix", outageNodeArgs(state)...)
	runs := filepath.Join(t.TempDir(), "runs")
	g := newGate(t)
	id := onceJob(c, runs, g)

	p.Cut()
	g.open(t)
	c.eventually(60*time.Second, "the result on disk", func() bool { return len(keptResults(t, state)) == 1 })
	n.stop(t, syscall.SIGKILL)
	p.Restore()

	again := c.serveAgain(dsn, "phoenix", outageNodeArgs(state)...)
	j := c.waitStatus(id, "FINISHED", 60*time.Second)
	if j.Attempt != 1 || j.Node != "phoenix" {
		t.Errorf("job = %+v, want FINISHED on phoenix at attempt 1", j)
	}
	ranOnce(t, runs)
	if files := keptResults(t, state); len(files) != 0 {
		t.Errorf("results left on disk after the start recorded them: %v", files)
	}
	if !strings.Contains(again.log.String(), "recording job results kept by an earlier run of this node") {
		t.Errorf("the node did not say it recorded the kept result:\n%s", again.log.String())
	}
}

// serveAgain starts a node under the name of one just killed. Until the
// killed process's row has gone stale the name is refused as already
// online, so it tries again until a process starts; it is online once it
// says so itself, as the row may still look online from the killed one.
func (c *cluster) serveAgain(dsn, name string, args ...string) *node {
	c.t.Helper()
	var n *node
	c.eventually(120*time.Second, "node "+name+" to start again", func() bool {
		addr := "127.0.0.1:" + freePort(c.t)
		all := append([]string{"serve", "--node", name, "--listen", addr,
			"--dispatch-interval", "200ms", "--heartbeat-interval", "1s", "--poll-interval", "100ms",
			"--max-load-avg", "off", "--log-level", "debug"}, args...)
		cmd := exec.Command(binary, all...)
		cmd.Env = append(os.Environ(), "JOBCTL_DB="+dsn)
		n = &node{name: name, addr: addr, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = n.log, n.log
		if err := cmd.Start(); err != nil {
			c.t.Fatal(err)
		}
		go func() { _ = cmd.Wait(); close(n.done) }()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if time.Now().After(deadline) {
				c.t.Fatalf("node %s neither came online nor exited:\n%s", name, n.log.String())
			}
			select {
			case <-n.done:
				if !strings.Contains(n.log.String(), "already online") {
					c.t.Fatalf("node %s exited early:\n%s", name, n.log.String())
				}
				c.t.Logf("node %s refused as already online; trying again", name)
				return false
			case <-time.After(50 * time.Millisecond):
			}
			if strings.Contains(n.log.String(), `msg="node online"`) {
				return true
			}
		}
	})
	c.t.Cleanup(func() {
		n.stop(c.t, syscall.SIGKILL)
		if c.t.Failed() {
			c.t.Logf("node %s log:\n%s", name, n.log.String())
		}
	})
	return n
}

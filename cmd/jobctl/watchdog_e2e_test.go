package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// treeJob is a job whose shell forks a grandchild in the job's process
// group, writes both pids to "$1.$JOBCTL_ATTEMPT" (whole, with a rename),
// and runs until the gate opens; then it ends its grandchild and notes the
// attempt in "$1.done".
func treeJob(g gate) []string {
	return []string{"--", "sh", "-c", `sleep 600 & echo $$ $! > "$1.$JOBCTL_ATTEMPT.tmp"; mv "$1.$JOBCTL_ATTEMPT.tmp" "$1.$JOBCTL_ATTEMPT"; ` +
		g.script() + `; kill $!; echo "$JOBCTL_ATTEMPT" >> "$1.done"`, "sh"}
}

func killOnCleanup(t *testing.T, pids []int) {
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// A node killed with SIGKILL takes the whole process tree of its job with
// it, the grandchild the parent-death signal does not reach included: its
// watchdog, which signals for the node do not end, sees the end of its pipe
// and kills the job's group.
func TestAKilledNodeTakesItsJobsGrandchildrenWithIt(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("doomed", "--exec")
	base := filepath.Join(t.TempDir(), "run")
	g := newGate(t)
	id := c.submit(append(treeJob(g), base)...)
	c.waitStatus(id, "RUNNING", 20*time.Second)
	pids := c.pids(base+".1", 2)
	killOnCleanup(t, pids)

	// Signals meant for the node (or a hang-up of its terminal) do not end
	// its watchdog, which is in a process group of its own.
	m := regexp.MustCompile(`msg="watchdog started".* pid=(\d+)`).FindStringSubmatch(n.log.String())
	if m == nil {
		t.Fatalf("the node did not log its watchdog's pid:\n%s", n.log.String())
	}
	watchdog, _ := strconv.Atoi(m[1])
	if pgid, err := syscall.Getpgid(watchdog); err != nil || pgid != watchdog {
		t.Errorf("the watchdog's process group is %d (%v), want its own", pgid, err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if err := syscall.Kill(watchdog, sig); err != nil {
			t.Fatal(err)
		}
	}

	killed := time.Now()
	// stop returns once every holder of the node's stderr, its watchdog
	// too, has exited.
	n.stop(t, syscall.SIGKILL)
	c.eventually(60*time.Second, "the job's shell and its grandchild to die with the node", func() bool {
		return !processAlive(pids[0]) && !processAlive(pids[1])
	})
	t.Logf("the job's process tree was gone %s after the node was killed", time.Since(killed).Round(time.Millisecond))
}

// A node frozen (SIGSTOP) past its node lease has its watchdog kill its
// job's process tree while it is still frozen. Once it runs again it says
// so, records the fenced run as one to run again rather than as a failure
// or success of its own, and runs the job again: one run at a time.
func TestAFrozenNodesJobIsKilledAndRunsAgain(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	n := c.serve("frozen", "--exec", "--node-lease", "2s")
	base := filepath.Join(t.TempDir(), "run")
	g := newGate(t)
	id := c.submit(append(treeJob(g), base)...)
	c.waitStatus(id, "RUNNING", 20*time.Second)
	first := c.pids(base+".1", 2)
	killOnCleanup(t, first)
	// The job's shell runs before the node tells its watchdog of the
	// group: a node frozen in between leaves the group unwatched.
	watched := fmt.Sprintf(`msg="the watchdog watches the run's process group".* pgid=%d`, first[0])
	c.eventually(20*time.Second, "the node to tell its watchdog of the job's group", func() bool {
		return regexp.MustCompile(watched).MatchString(n.log.String())
	})

	pid := n.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	c.eventually(10*time.Second, "the node to stop", func() bool { return processState(pid) == "T" })
	c.eventually(60*time.Second, "the frozen node's job to be killed", func() bool {
		return !processAlive(first[0]) && !processAlive(first[1])
	})
	t.Logf("the job's process tree was gone %s after the node was frozen", time.Since(frozen).Round(time.Millisecond))
	if s := processState(pid); s != "T" {
		t.Fatalf("the node is %q, want still stopped (T) when its job dies", s)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	c.eventually(30*time.Second, "the node to log the lapse of its node lease", func() bool {
		l := n.log.String()
		return strings.Contains(l, "could not record liveness within the node lease") && strings.Contains(l, "node_lease=2s")
	})
	second := c.pids(base+".2", 2)
	killOnCleanup(t, second)
	if processAlive(first[0]) || processAlive(first[1]) {
		t.Fatal("the job runs again while its first run is alive")
	}
	g.open(t)
	c.ok("wait", id, "--timeout", "60s")
	if j := c.show(id); j.Status != "FINISHED" || j.Attempt != 2 {
		t.Errorf("job = %s at attempt %d, want FINISHED at attempt 2", j.Status, j.Attempt)
	}
	done, _ := os.ReadFile(base + ".done")
	if got := strings.Fields(string(done)); len(got) != 1 || got[0] != "2" {
		t.Errorf("attempts that completed: %q, want only the second", got)
	}
}

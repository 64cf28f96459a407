package main_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A node killed with SIGKILL takes its job's processes with it; the
// heartbeat marks it OFFLINE, the dispatcher restarts the job on another
// node, and the job completes exactly once.
func TestJobOfAKilledNodeRunsAgainElsewhereExactlyOnce(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	c.serve("keeper", "--exec")
	c.ok("nodes", "maintenance", "keeper", "on") // the first run must land on the victim
	victim := c.serve("victim", "--exec", "--dispatch-interval", "0")

	base := filepath.Join(t.TempDir(), "run")
	id := c.submit("--", "sh", "-c", `echo $$ > "$1.$JOBCTL_ATTEMPT.tmp"; mv "$1.$JOBCTL_ATTEMPT.tmp" "$1.$JOBCTL_ATTEMPT"; sleep 3; echo "$JOBCTL_NODE" >> "$1.done"`, "sh", base)
	if j := c.waitStatus(id, "RUNNING", 20*time.Second); j.Node != "victim" {
		t.Fatalf("the job runs on %q, want victim", j.Node)
	}
	var pid int
	c.eventually(10*time.Second, "the first attempt to write its pid", func() bool {
		b, err := os.ReadFile(base + ".1")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})

	victim.stop(t, syscall.SIGKILL)
	c.eventually(5*time.Second, "the job's process to die with its node", func() bool { return !processAlive(pid) })
	c.ok("nodes", "maintenance", "keeper", "off")

	c.ok("wait", id, "--timeout", "60s")
	j := c.show(id)
	if j.Status != "FINISHED" || j.Node != "keeper" || j.Attempt != 2 {
		t.Fatalf("job = %+v, want FINISHED on keeper at attempt 2", j)
	}
	done, _ := os.ReadFile(base + ".done")
	if got := strings.Fields(string(done)); len(got) != 1 || got[0] != "keeper" {
		t.Fatalf("the job completed %d times (%q), want once, on keeper", len(got), got)
	}
	for _, n := range c.nodes() {
		if n.Name == "victim" && n.State != "OFFLINE" {
			t.Errorf("the killed node is %s, want OFFLINE", n.State)
		}
	}
}

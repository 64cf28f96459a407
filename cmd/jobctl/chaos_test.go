package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Jobs keep running through a node being killed and coming back: every job
// ends FINISHED, and no two runs of one job ever overlap — a run killed with
// its node ends at the kill, and its job runs again only after the node was
// found dead.
func TestJobsSurviveANodeKilledAndRestarted(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	args := []string{"--exec", "--max-load", "3"}
	c.serve("steady", args...)
	flaky := c.serve("flaky", args...)

	dir := t.TempDir()
	// Each run appends "start NANOS" and, if it gets there, "end NANOS" to
	// a file of its job.
	script := `f="$1/$JOBCTL_JOB_ID"; echo "start $(date +%s%N)" >> "$f"; sleep 0.8; echo "end $(date +%s%N)" >> "$f"`
	var ids []string
	for range 18 {
		ids = append(ids, c.submit("--", "sh", "-c", script, "sh", dir))
	}
	c.eventually(30*time.Second, "flaky to run jobs", func() bool {
		for _, n := range c.nodes() {
			if n.Name == "flaky" && n.Running > 0 {
				return true
			}
		}
		return false
	})
	flaky.stop(t, syscall.SIGKILL)
	killedAt := time.Now().UnixNano()
	// The name is free again once the heartbeat has marked the node OFFLINE.
	c.eventually(60*time.Second, "the killed node to be marked OFFLINE", func() bool {
		for _, n := range c.nodes() {
			if n.Name == "flaky" {
				return n.State == "OFFLINE"
			}
		}
		return false
	})
	c.serve("flaky", args...)

	c.ok(append([]string{"wait", "--timeout", "90s"}, ids...)...)
	reran := 0
	for _, id := range ids {
		j := c.show(id)
		if j.Status != "FINISHED" {
			t.Errorf("job %s ended %s", id, j.Status)
		}
		if j.Attempt > 1 {
			reran++
		}
		b, err := os.ReadFile(filepath.Join(dir, id))
		if err != nil {
			t.Fatalf("job %s never ran: %v", id, err)
		}
		if err := runsDoNotOverlap(string(b), killedAt); err != nil {
			t.Errorf("job %s: %v\n%s", id, err, b)
		}
	}
	if reran == 0 {
		t.Error("no job ran again: the kill hit no running job, so this test proved nothing")
	}
	t.Logf("%d of %d jobs ran again after the kill", reran, len(ids))
}

// runsDoNotOverlap checks a job's run log: each run starts after the one
// before ended, where a run with no end was cut off at killedAt.
func runsDoNotOverlap(log string, killedAt int64) error {
	type run struct{ start, end int64 }
	var runs []run
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		kind, at, _ := strings.Cut(line, " ")
		ns, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			return fmt.Errorf("bad line %q", line)
		}
		switch kind {
		case "start":
			runs = append(runs, run{start: ns, end: killedAt})
		case "end":
			if len(runs) == 0 {
				return fmt.Errorf("an end before any start")
			}
			runs[len(runs)-1].end = ns
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start < runs[j].start })
	for i := 1; i < len(runs); i++ {
		if runs[i].start < runs[i-1].end {
			return fmt.Errorf("run %d started before run %d ended", i+1, i)
		}
	}
	return nil
}

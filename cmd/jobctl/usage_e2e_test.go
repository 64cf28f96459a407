package main_test

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// usageView is the measured use in `show -o json`.
type usageView struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	PeakMemory  int64   `json:"peak_memory_bytes"`
	WallSeconds float64 `json:"wall_seconds"`
	OOMKilled   bool    `json:"oom_killed"`
}

type usedJobView struct {
	Status      string     `json:"status"`
	Message     string     `json:"message"`
	MemoryLimit int64      `json:"memory_limit"`
	Usage       *usageView `json:"usage"`
	Attempts    []struct {
		Usage *usageView `json:"usage"`
		Live  *struct {
			CPUSeconds float64 `json:"cpu_seconds"`
			Memory     int64   `json:"memory_bytes"`
		} `json:"live"`
	} `json:"attempts"`
}

func (c *cluster) used(id string) usedJobView {
	c.t.Helper()
	var j usedJobView
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &j); err != nil {
		c.t.Fatalf("show %s: %v", id, err)
	}
	return j
}

// busyLoop burns about a second of CPU in the shell and a child of it and
// then prints, with the shell's times builtin, the CPU time they used:
// the job's own account of its CPU time.
const busyLoop = `i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done; sh -c 'j=0; while [ $j -lt 150000 ]; do j=$((j+1)); done'; times`

var timesLine = regexp.MustCompile(`(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s`)

// TestMeasuredUse runs real jobs on a real node and reads what each used
// back from the database, as an operator would: a busy loop's CPU time
// matches its own account within 10 %, a job that holds 200 MiB shows a
// peak of at least that, and one over --memory 64MiB ends killed with its
// own reason, found by list --oom. The node measures its jobs in cgroups
// and enforces their limits (--enforce); where this machine makes no
// cgroups the test says so and stops.
func TestMeasuredUse(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a node makes cgroups for its jobs only as root here, and the tests do not run as root")
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		t.Skip("the kernel has no cgroup file system mounted")
	}
	c := sqliteCluster(t)
	n := c.serve("n1", "--exec", "--enforce", "--node-lease", "2s")
	c.eventually(10*time.Second, "the node's line on what it measures and enforces", func() bool {
		return strings.Contains(n.log.String(), "each job runs in a cgroup")
	})
	if strings.Contains(n.log.String(), "cannot enforce memory limits") {
		t.Skipf("this kernel's cgroups hold no memory limit here:\n%s", n.log.String())
	}

	busy := c.submit("--", "sh", "-c", busyLoop)
	hog := c.submit("--", "sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null")
	limited := c.submit("--memory", "64MiB", "--", "sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null")

	// The busy loop: CPU time against the job's own account of it.
	c.waitStatus(busy, "FINISHED", 60*time.Second)
	j := c.used(busy)
	if j.Usage == nil || len(j.Attempts) != 1 || j.Attempts[0].Usage == nil || *j.Attempts[0].Usage != *j.Usage {
		t.Fatalf("show %s -o json: usage %+v, attempts %+v; want the attempt's usage, also the job's", busy, j.Usage, j.Attempts)
	}
	lines := timesLine.FindAllStringSubmatch(c.ok("logs", busy), -1)
	if len(lines) != 2 {
		t.Fatalf("the busy job's log has no times: %q", c.ok("logs", busy))
	}
	var reported float64
	for _, m := range lines {
		for _, i := range []int{1, 3} {
			minutes, _ := strconv.ParseFloat(m[i], 64)
			seconds, _ := strconv.ParseFloat(m[i+1], 64)
			reported += minutes*60 + seconds
		}
	}
	if reported < 0.3 || math.Abs(j.Usage.CPUSeconds-reported) > 0.1*reported {
		t.Errorf("measured %.3fs of CPU, the job reported %.3fs; want within 10%%", j.Usage.CPUSeconds, reported)
	}
	t.Logf("busy loop: measured %.3fs of CPU, the job reported %.3fs", j.Usage.CPUSeconds, reported)

	// 200 MiB held at once.
	c.waitStatus(hog, "FINISHED", 60*time.Second)
	if u := c.used(hog).Usage; u == nil || u.PeakMemory < 200<<20 || u.OOMKilled {
		t.Errorf("the 200 MiB job used %+v; want a peak of at least 200 MiB", u)
	}

	// Over its limit: killed, and says so.
	c.waitStatus(limited, "FAILED", 60*time.Second)
	k := c.used(limited)
	if !strings.HasPrefix(k.Message, "killed: out of memory, limit 64MiB") || k.MemoryLimit != 64<<20 ||
		k.Usage == nil || !k.Usage.OOMKilled {
		t.Errorf("the job over --memory 64MiB: %+v; want killed: out of memory, limit 64MiB", k)
	}
	if got := strings.Fields(c.ok("list", "--oom", "-q")); len(got) != 1 || got[0] != limited {
		t.Errorf("list --oom -q = %v, want [%s]", got, limited)
	}
	if !strings.Contains(c.ok("show", limited), "killed: out of memory, limit 64MiB") {
		t.Errorf("show %s does not say why it ended", limited)
	}

	// Per type, with the declared load beside it, and in /metrics.
	var stats struct {
		Usage []struct {
			Type         string  `json:"type"`
			DeclaredLoad float64 `json:"declared_load"`
			Runs         int     `json:"runs"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(c.ok("stats", "-o", "json")), &stats); err != nil {
		t.Fatal(err)
	}
	if len(stats.Usage) != 1 || stats.Usage[0].Type != "exec" || stats.Usage[0].Runs != 3 || stats.Usage[0].DeclaredLoad != 1 {
		t.Errorf("stats usage = %+v, want exec with its 3 runs of load 1", stats.Usage)
	}
	metrics := n.metricsText(t)
	for _, name := range []string{"jobctl_job_wait_seconds", "jobctl_job_run_seconds", "jobctl_job_cpu_seconds"} {
		if !strings.Contains(metrics, name+`_count{type="exec"} 3`) {
			t.Errorf("/metrics lacks %s_count{type=\"exec\"} 3", name)
		}
	}

	// While a job runs its node reports its use with its liveness.
	running := c.submit("--", "sh", "-c", "while :; do :; done")
	c.waitStatus(running, "RUNNING", 60*time.Second)
	c.eventually(30*time.Second, "the node to report the running job's CPU time", func() bool {
		j := c.used(running)
		last := j.Attempts[len(j.Attempts)-1]
		return last.Live != nil && last.Live.CPUSeconds > 0.2 && last.Live.Memory > 0
	})
	var nodes []struct {
		RunningUsage []struct {
			JobID int64 `json:"job_id"`
		} `json:"running_usage"`
	}
	if err := json.Unmarshal([]byte(c.ok("nodes", "-o", "json")), &nodes); err != nil || len(nodes) != 1 ||
		len(nodes[0].RunningUsage) != 1 || strconv.FormatInt(nodes[0].RunningUsage[0].JobID, 10) != running {
		t.Errorf("nodes -o json running_usage = %+v, %v; want job %s", nodes, err, running)
	}
	c.ok("cancel", running)
	c.waitStatus(running, "CANCELLED", 60*time.Second)
}

// metricsText is the node's /metrics.
func (n *node) metricsText(t *testing.T) string {
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
	return string(body)
}

// liftLimit is a job that tries to lift its own memory limit by writing
// its cgroup's limit file, says how that went, and then holds 200 MiB.
const liftLimit = `if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
  f=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/memory.max; v=max
else
  f=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/memory.limit_in_bytes; v=-1
fi
[ -e "$f" ] && echo "limit file $f"
if echo $v > "$f" 2>/dev/null; then echo lifted; else echo held; fi
id -u
head -c 200M /dev/zero | tail -n 1 >/dev/null`

// With --job-user and --enforce together, a job runs as the job user in a
// cgroup of the node's: it cannot lift its own memory limit, and is killed
// at it.
func TestEnforceHoldsJobsOfTheJobUser(t *testing.T) {
	jobUser := testUser(t, jobUserName)
	c := sqliteCluster(t)
	n := c.serve("n1", "--exec", "--enforce", "--job-user", jobUserName, "--node-lease", "2s")
	c.eventually(10*time.Second, "the node's line on what it measures and enforces", func() bool {
		return strings.Contains(n.log.String(), "each job runs in a cgroup")
	})
	if strings.Contains(n.log.String(), "cannot enforce memory limits") {
		t.Skipf("this kernel's cgroups hold no memory limit here:\n%s", n.log.String())
	}
	id := c.submit("--memory", "64MiB", "--", "sh", "-c", liftLimit)
	c.waitStatus(id, "FAILED", 60*time.Second)
	log := c.ok("logs", id)
	if !strings.Contains(log, "limit file ") || !strings.Contains(log, "held") || strings.Contains(log, "lifted") ||
		!strings.Contains(log, "\n"+jobUser.Uid+"\n") {
		t.Errorf("the job's log:\n%s\nwant it to find its limit file, fail to lift it, and run as uid %s", log, jobUser.Uid)
	}
	if k := c.used(id); !strings.HasPrefix(k.Message, "killed: out of memory, limit 64MiB") || k.Usage == nil || !k.Usage.OOMKilled {
		t.Errorf("the job over --memory 64MiB as %s: %+v; want killed: out of memory, limit 64MiB", jobUserName, k)
	}
}

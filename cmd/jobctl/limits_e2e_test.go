package main_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// limitRun is one run of a job as the job recorded it: when it started and
// ended (by its own clock readings), or, for a run killed with its node,
// when the test saw its process gone.
type limitRun struct {
	job, attempt string
	pid          int
	start, end   int64 // Unix nanoseconds; end 0 while it runs
}

// limitRecorder reads the records the jobs of limitScript write into dir.
type limitRecorder struct {
	t      *testing.T
	dir    string
	killed map[string]int64 // job.attempt → when its process was seen gone
}

// limitScript records its start (pid and time), waits until the test opens
// the job's own gate, and records its end.
const limitScript = `d=$1; run="$JOBCTL_JOB_ID.$JOBCTL_ATTEMPT"
echo "$$ $(date +%s%N)" > "$d/$run.start.tmp" && mv "$d/$run.start.tmp" "$d/$run.start"
while [ ! -e "$d/open.$JOBCTL_JOB_ID" ]; do sleep 0.05; done
date +%s%N > "$d/$run.end.tmp" && mv "$d/$run.end.tmp" "$d/$run.end"
`

func (r *limitRecorder) runs() []limitRun {
	r.t.Helper()
	starts, err := filepath.Glob(filepath.Join(r.dir, "*.start"))
	if err != nil {
		r.t.Fatal(err)
	}
	var out []limitRun
	for _, path := range starts {
		name := strings.TrimSuffix(filepath.Base(path), ".start")
		job, attempt, _ := strings.Cut(name, ".")
		run := limitRun{job: job, attempt: attempt}
		b, err := os.ReadFile(path)
		if err != nil {
			r.t.Fatal(err)
		}
		f := strings.Fields(string(b))
		if len(f) != 2 {
			r.t.Fatalf("%s holds %q", path, b)
		}
		run.pid, _ = strconv.Atoi(f[0])
		run.start, _ = strconv.ParseInt(f[1], 10, 64)
		if b, err := os.ReadFile(filepath.Join(r.dir, name+".end")); err == nil {
			run.end, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		} else if at, ok := r.killed[name]; ok {
			run.end = at
		}
		out = append(out, run)
	}
	return out
}

// running are the runs that have started and not ended.
func (r *limitRecorder) running() []limitRun {
	var out []limitRun
	for _, run := range r.runs() {
		if run.end == 0 {
			out = append(out, run)
		}
	}
	return out
}

// finished are the jobs whose run ended on its own.
func (r *limitRecorder) finished() int {
	n := 0
	for _, run := range r.runs() {
		if _, killed := r.killed[run.job+"."+run.attempt]; run.end != 0 && !killed {
			n++
		}
	}
	return n
}

// mostAtOnce is the largest number of runs that overlapped in time.
func mostAtOnce(runs []limitRun) int {
	type event struct {
		at    int64
		delta int
	}
	var events []event
	for _, r := range runs {
		events = append(events, event{r.start, 1}, event{r.end, -1})
	}
	// At the same instant an end goes before a start.
	slices.SortFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.delta, b.delta)
	})
	most, now := 0, 0
	for _, e := range events {
		now += e.delta
		most = max(most, now)
	}
	return most
}

// roundsPass waits until the lease holder, whichever of nodes it is, has
// run k more dispatch rounds.
func (c *cluster) roundsPass(nodes map[string]*node, k int) {
	c.t.Helper()
	total := func() int {
		sum := 0
		for _, n := range nodes {
			sum += n.dispatchRounds(c.t)
		}
		return sum
	}
	start := total()
	c.eventually(60*time.Second, fmt.Sprintf("%d dispatch rounds", k), func() bool { return total() >= start+k })
}

// A limit of 2 on a type holds across three nodes and a SIGKILL of the
// lease holder, restarted at once under its name: never more than 2 of the
// type run at once, jobs held back wait and say why, and all of them end.
func TestTypeLimitHoldsAcrossNodesAndFailover(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(script, []byte(limitScript), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--service", fmt.Sprintf("t=sh '%s' '%s'", script, dir), "--max-load", "8"}
	nodes := map[string]*node{"n1": c.serve("n1", args...)}
	c.eventually(20*time.Second, "n1 to hold the lease", func() bool { return c.lease().Owner == "n1" })
	nodes["n2"], nodes["n3"] = c.serve("n2", args...), c.serve("n3", args...)

	if r := c.run("limits", "set", "t", "--max-running", "0"); r.code != 2 {
		t.Errorf("limits set --max-running 0: exit %d, want 2 (stderr %q)", r.code, r.stderr)
	}
	if r := c.run("limits", "rm", "t"); r.code != 3 {
		t.Errorf("limits rm of a type without a limit: exit %d, want 3 (stderr %q)", r.code, r.stderr)
	}
	if out := c.ok("limits", "set", "t", "--max-running", "2"); out != "t\t2\n" {
		t.Errorf("limits set printed %q", out)
	}
	var ids []string
	for range 8 {
		ids = append(ids, c.submit("--type", "t"))
	}

	rec := &limitRecorder{t: t, dir: dir, killed: map[string]int64{}}
	holder := func() *node {
		var n *node
		c.eventually(30*time.Second, "a lease holder", func() bool {
			l := c.lease()
			n = nodes[l.Owner]
			return l.Valid && n != nil
		})
		return n
	}
	killed := false
	for rec.finished() < len(ids) {
		want := min(2, len(ids)-rec.finished())
		c.eventually(60*time.Second, fmt.Sprintf("%d jobs of type t to run", want), func() bool { return len(rec.running()) >= want })
		// Some rounds later no third has started, and the queued ones
		// say why they wait.
		c.roundsPass(nodes, 3)
		running := rec.running()
		if len(running) != want {
			t.Fatalf("%d jobs of type t run under a limit of 2: %+v", len(running), running)
		}
		if want == 2 && rec.finished()+2 < len(ids) {
			queued := strings.Fields(c.ok("list", "--type", "t", "--state", "queued,restart", "-q"))
			if len(queued) == 0 {
				t.Fatal("no job of type t waits, though fewer have run than were submitted")
			}
			if out := c.ok("explain", queued[0]); !strings.Contains(out, "held back: type t is at its limit of 2 running (jobctl limits)") {
				t.Errorf("explain of a held-back job does not name the limit:\n%s", out)
			}
		}
		if !killed && rec.finished() >= 4 {
			killed = true
			h := holder()
			h.stop(t, syscall.SIGKILL)
			for _, run := range running {
				if c.show(run.job).Node != h.name {
					continue
				}
				c.eventually(20*time.Second, "the run of job "+run.job+" to die with its node", func() bool { return !processAlive(run.pid) })
				rec.killed[run.job+"."+run.attempt] = time.Now().UnixNano()
			}
			t.Logf("killed lease holder %s with %d of the running jobs", h.name, len(rec.killed))
			nodes[h.name] = c.serve(h.name, args...)
			c.waitRegistered(nodes[h.name])
			continue
		}
		for _, run := range running {
			if err := os.WriteFile(filepath.Join(dir, "open."+run.job), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c.eventually(60*time.Second, "the jobs let go to end", func() bool {
			ended := 0
			for _, r := range rec.runs() {
				for _, let := range running {
					if r.job == let.job && r.attempt == let.attempt && r.end != 0 {
						ended++
					}
				}
			}
			return ended == len(running)
		})
	}
	c.ok(append([]string{"wait", "--timeout", "60s"}, ids...)...)

	runs := rec.runs()
	if most := mostAtOnce(runs); most > 2 {
		t.Errorf("%d jobs of type t ran at once under a limit of 2: %+v", most, runs)
	}
	if !killed {
		t.Error("the lease holder was never killed")
	}
	for _, id := range ids {
		if j := c.show(id); j.Status != "FINISHED" {
			t.Errorf("job %s is %s, want FINISHED", id, j.Status)
		}
	}
	var limits []struct {
		Type       string `json:"type"`
		MaxRunning int    `json:"max_running"`
		Running    int    `json:"running"`
	}
	if err := json.Unmarshal([]byte(c.ok("limits", "ls", "-o", "json")), &limits); err != nil ||
		len(limits) != 1 || limits[0].Type != "t" || limits[0].MaxRunning != 2 || limits[0].Running != 0 {
		t.Errorf("limits ls -o json at the end: %+v, %v", limits, err)
	}
}

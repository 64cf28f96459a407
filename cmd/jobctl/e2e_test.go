package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestJobRunsAndItsLogIsReadable(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec")
	id := c.submit("--", "sh", "-c", `echo "hello from job $JOBCTL_JOB_ID"; echo "jobctl:progress 50 halfway"; cat`)
	c.ok("wait", id, "--timeout", "30s")
	j := c.show(id)
	if j.Status != "FINISHED" || j.ExitCode == nil || *j.ExitCode != 0 || j.Node != "solo" || j.Attempt != 1 {
		t.Fatalf("job = %+v, want FINISHED with exit 0 on solo, attempt 1", j)
	}
	if j.Progress != 50 {
		t.Errorf("progress = %d, want 50", j.Progress)
	}
	if logs := c.ok("logs", id); !strings.Contains(logs, "hello from job "+id) {
		t.Fatalf("logs = %q, want the job's output", logs)
	}
}

func TestFailingCommandEndsFailedWithItsExitCode(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec")
	r := c.run("submit", "--wait", "--", "sh", "-c", "echo failing >&2; exit 3")
	if r.code != 4 {
		t.Fatalf("submit --wait of a failing job: exit %d, want 4 (stderr %q)", r.code, r.stderr)
	}
	id := jobID(r.stdout)
	j := c.show(id)
	if j.Status != "FAILED" || j.ExitCode == nil || *j.ExitCode != 3 {
		t.Fatalf("job = %+v, want FAILED with exit code 3", j)
	}
	if logs := c.ok("logs", id); !strings.Contains(logs, "failing") {
		t.Fatalf("stderr is not in the log: %q", logs)
	}
}

func TestCancelKillsTheRunningProcessGroup(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec", "--cancel-grace", "2s")
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// The job's shell starts a grandchild and waits: cancelling must reach both.
	id := c.submit("--", "sh", "-c", `sleep 1000 & echo $! > "$1.tmp"; echo $$ >> "$1.tmp"; mv "$1.tmp" "$1"; wait`, "sh", pids)
	c.waitStatus(id, "RUNNING", 20*time.Second)
	procs := c.pids(pids, 2)
	for _, pid := range procs {
		if !processAlive(pid) {
			t.Fatalf("process %d of the job is not running before cancel", pid)
		}
	}
	c.ok("cancel", id)
	j := c.waitStatus(id, "CANCELLED", 20*time.Second)
	for _, pid := range procs {
		if processAlive(pid) {
			t.Errorf("process %d survived the cancel", pid)
		}
	}
	if j.FinishedAt == nil {
		t.Errorf("a cancelled job has no finished_at: %+v", j)
	}
	if logs := c.ok("logs", id); !strings.Contains(logs, "cancel") {
		t.Errorf("the log does not say the job was cancelled: %q", logs)
	}
}

func TestPauseStopsAJobAndResumeContinuesIt(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("solo", "--exec")
	dir := t.TempDir()
	counter, pidFile := filepath.Join(dir, "counter"), filepath.Join(dir, "pid")
	g := newGate(t)
	id := c.submit("--", "sh", "-c", `echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; until [ -e "$2" ]; do echo tick >> "$3"; sleep 0.05; done`,
		"sh", pidFile, string(g), counter)
	lines := func() int {
		b, _ := os.ReadFile(counter)
		return strings.Count(string(b), "\n")
	}
	c.eventually(20*time.Second, "the job to start counting", func() bool { return lines() >= 2 })
	pid := c.pids(pidFile, 1)[0]
	c.ok("pause", id)
	if s := c.show(id).Status; s != "PAUSED" {
		t.Fatalf("after pause the job is %s", s)
	}
	// The node stops the process group within its poll interval; once
	// stopped, nothing it does can add a line.
	c.eventually(20*time.Second, "the job's process to be stopped", func() bool { return processState(pid) == "T" })
	before := lines()
	c.waitRounds(n, 3)
	if after := lines(); after != before || processState(pid) != "T" {
		t.Fatalf("a paused job went on: %d → %d lines, process state %q", before, after, processState(pid))
	}
	c.ok("resume", id)
	c.eventually(20*time.Second, "the resumed job to count on", func() bool { return lines() > before })
	g.open(t)
	c.ok("wait", id, "--timeout", "30s")
	if j := c.show(id); j.Status != "FINISHED" {
		t.Fatalf("after resume: %s, want FINISHED", j.Status)
	}
}

func TestTimeoutCancelsTheJob(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec", "--cancel-grace", "1s")
	r := c.run("submit", "--wait", "--run-timeout", "1s", "--", "sleep", "60")
	if r.code != 4 {
		t.Fatalf("a job past its run limit: submit --wait exit %d, want 4 (stderr %q)", r.code, r.stderr)
	}
	id := jobID(r.stdout)
	j := c.show(id)
	if j.Status != "CANCELLED" || !strings.Contains(j.Message, "timed out") {
		t.Fatalf("job = %+v, want CANCELLED saying it timed out", j)
	}
	if logs := c.ok("logs", id); !strings.Contains(logs, "timed out") {
		t.Errorf("the log does not say the job timed out: %q", logs)
	}
}

// --timeout bounds the wait of submit --wait, as of every command that
// waits: the wait gives up with exit 5, and the job goes on.
func TestSubmitWaitTimeoutBoundsTheWait(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec")
	g := newGate(t)
	r := c.run("submit", "--wait", "--timeout", "2s", "--", "sh", "-c", g.script())
	if r.code != 5 {
		t.Fatalf("submit --wait --timeout 2s of a job that runs on: exit %d, want 5 (stderr %q)", r.code, r.stderr)
	}
	id := jobID(r.stdout)
	if j := c.show(id); j.Status != "RUNNING" && j.Status != "QUEUED" {
		t.Fatalf("the job is %s when the wait gave up; want it to go on", j.Status)
	}
	g.open(t)
	c.waitStatus(id, "FINISHED", 60*time.Second)
}

func TestNodeNeverRunsMoreThanItsMaxLoad(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("small", "--exec", "--max-load", "2")
	g := newGate(t)
	var ids []string
	for range 6 {
		ids = append(ids, c.submit("--load", "1", "--", "sh", "-c", g.script()))
	}
	// Two jobs fill the node; the others must wait however many rounds pass.
	c.eventually(30*time.Second, "two jobs to run", func() bool { return c.nodes()[0].Running == 2 })
	c.waitRounds(n, 3)
	running := 0
	for _, id := range ids {
		switch j := c.show(id); j.Status {
		case "RUNNING":
			running++
		case "QUEUED":
		default:
			t.Fatalf("job %s is %s while the node is full; want RUNNING or QUEUED", id, j.Status)
		}
	}
	if running != 2 {
		t.Fatalf("%d jobs of load 1 run on a node of max load 2, want 2", running)
	}
	g.open(t)
	c.ok(append([]string{"wait", "--timeout", "60s"}, ids...)...)
	var spans [][2]time.Time
	for _, id := range ids {
		j := c.show(id)
		if j.Status != "FINISHED" || j.StartedAt == nil || j.FinishedAt == nil {
			t.Fatalf("job %s = %+v, want FINISHED with start and end", id, j)
		}
		spans = append(spans, [2]time.Time{*j.StartedAt, *j.FinishedAt})
	}
	if most := maxOverlap(spans); most != 2 {
		t.Fatalf("at most %d jobs of load 1 ran at once on a node of max load 2, want exactly 2", most)
	}
}

// maxOverlap is the largest number of spans covering one instant.
func maxOverlap(spans [][2]time.Time) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		edges = append(edges, edge{s[0], 1}, edge{s[1], -1})
	}
	// Ends sort before starts at the same instant: touching spans do not overlap.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta
		}
		return edges[i].at.Before(edges[j].at)
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	return most
}

func TestTwoNodesOnPostgresShareWorkByLoadFactor(t *testing.T) {
	t.Parallel()
	testTwoNodesShareWorkByLoadFactor(t, postgresCluster(t))
}

func TestTwoNodesOnMariaDBShareWorkByLoadFactor(t *testing.T) {
	t.Parallel()
	testTwoNodesShareWorkByLoadFactor(t, mysqlCluster(t))
}

func testTwoNodesShareWorkByLoadFactor(t *testing.T, c *cluster) {
	c.serve("big", "--exec", "--max-load", "4")
	c.serve("small", "--exec", "--max-load", "2")
	c.eventually(10*time.Second, "one node to hold the lease", func() bool { return c.lease().Valid })

	// The jobs run until the gate opens, so all six run at once however
	// slowly they are placed: the split is the placement's alone.
	g := newGate(t)
	var ids []string
	for range 6 {
		ids = append(ids, c.submit("--hold", "--load", "1", "--", "sh", "-c", g.script()))
	}
	c.ok(append([]string{"release"}, ids...)...)
	perNode := map[string]int{}
	c.eventually(60*time.Second, "all six jobs to run", func() bool {
		clear(perNode)
		for _, id := range ids {
			if j := c.show(id); j.Status == "RUNNING" {
				perNode[j.Node]++
			}
		}
		return perNode["big"]+perNode["small"] == 6
	})
	if perNode["big"] != 4 || perNode["small"] != 2 {
		t.Fatalf("jobs per node = %v, want big 4 and small 2 (equal load factors)", perNode)
	}
	g.open(t)
	c.ok(append([]string{"wait", "--timeout", "60s"}, ids...)...)

	var holders []string
	for _, n := range c.nodes() {
		if n.Dispatcher {
			holders = append(holders, n.Name)
		}
	}
	if l := c.lease(); len(holders) != 1 || !l.Valid || l.Owner != holders[0] {
		t.Fatalf("dispatchers = %v, lease = %+v: want exactly one holder", holders, l)
	}
}

func TestStoppingTheHolderReleasesTheLeaseToTheNextNode(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	// A lease far longer than the test: only a released lease can change
	// hands before the end, never an expired one.
	args := []string{"--dispatch-interval", "200ms", "--lease-timeout", "1h"}
	first := c.serve("first", args...)
	c.eventually(10*time.Second, "first to hold the lease", func() bool { return c.lease().Owner == "first" })
	second := c.serve("second", args...)
	// Both nodes try for the lease every interval; while first renews it,
	// second never gets a round.
	c.waitRounds(first, 3)
	if l := c.lease(); l.Owner != "first" || !l.Valid {
		t.Fatalf("while first runs the lease is %+v", l)
	}
	if r := second.dispatchRounds(t); r != 0 {
		t.Fatalf("second ran %d dispatch rounds while first held the lease", r)
	}
	first.stop(t, syscall.SIGTERM)
	c.eventually(60*time.Second, "second to take the released lease", func() bool {
		l := c.lease()
		return l.Owner == "second" && l.Valid
	})
	c.waitRounds(second, 1)
	for _, n := range c.nodes() {
		if n.Name == "first" && n.State != "OFFLINE" {
			t.Errorf("a cleanly stopped node is %s, want OFFLINE", n.State)
		}
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.ok("db", "migrate")
	// A batch whose second line holds a string that is not UTF-8: the
	// same bytes as an argument are refused, so they are here.
	notUTF8 := filepath.Join(t.TempDir(), "jobs.jsonl")
	nodesFile := filepath.Join(t.TempDir(), "nodes.yaml")
	notUTF8Payload := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(notUTF8Payload, []byte("{\"file\":\"caf\xe9\"}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notUTF8, []byte("{\"type\":\"noop\"}\n{\"type\":\"noop\",\"key\":\"caf\xe9\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nodesFile, []byte("- {name: a, max_load: 4}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"submit", "--load", "nope", "--", "true"}, 2},
		{[]string{"submit", "--load", "-1", "--", "true"}, 2},
		{[]string{"submit", "--load", "NaN", "--", "true"}, 2},
		{[]string{"submit", "--timeout", "soon", "--", "true"}, 2},
		{[]string{"submit", "--run-timeout", "0s", "--", "true"}, 2},
		{[]string{"submit", "--timeout", "1m", "--run-timeout", "1h", "--", "true"}, 2},
		{[]string{"submit", "--batch", "/nonexistent/jobs.jsonl"}, 2},
		{[]string{"submit", "--batch", notUTF8}, 2},
		{[]string{"submit", "--payload", "@/nonexistent/payload.json", "--type", "noop"}, 2},
		{[]string{"submit", "--payload", "@" + notUTF8Payload, "--type", "noop"}, 2},
		{[]string{"workflow", "start", "/nonexistent/flow.yaml"}, 2},
		{[]string{"schedules", "add", "x", "--cron", "@hourly", "--type", "noop", "--payload", "@/nonexistent/p.json"}, 2},
		{[]string{"schedules", "add", "x", "--cron", "@every -1s", "--type", "noop"}, 2},
		{[]string{"schedules", "add", "x", "--cron", "@every 0s", "--type", "noop"}, 2},
		{[]string{"schedules", "add", "x", "--cron", "@every 1ns", "--type", "noop"}, 2},
		{[]string{"serve", "--config", "/nonexistent/jobctl.yaml"}, 2},
		{[]string{"simulate", "--nodes", "/nonexistent/nodes.yaml", "--generate", "count=1"}, 2},
		{[]string{"simulate", "--jobs", "/nonexistent/jobs.yaml", "--nodes", nodesFile}, 2},
		{[]string{"submit", "--payload", "{not json", "--type", "noop"}, 2},
		{[]string{"submit", "--parent", "424242", "--", "true"}, 3},
		{[]string{"list", "--state", "NOSUCHSTATE"}, 2},
		{[]string{"show", "424242"}, 3},
		{[]string{"show", "abc"}, 2},
		{[]string{"cancel", "424242"}, 3},
		{[]string{"logs", "424242"}, 3},
		{[]string{"wait", "424242"}, 3},
		{[]string{"nosuchcommand"}, 2},
	}
	for _, tc := range cases {
		r := c.run(tc.args...)
		if r.code != tc.code {
			t.Errorf("jobctl %s: exit %d, want %d (stderr %q)", strings.Join(tc.args, " "), r.code, tc.code, r.stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || lines[0] == "" {
			t.Errorf("jobctl %s: stderr should be one clear line, got %q", strings.Join(tc.args, " "), r.stderr)
		}
	}
	if ids := strings.TrimSpace(c.ok("list", "-q")); ids != "" {
		t.Fatalf("bad input created jobs: %q", ids)
	}
	if names := strings.TrimSpace(c.ok("schedules", "-q")); names != "" {
		t.Fatalf("bad input created schedules: %q", names)
	}
}

func TestBadDatabaseIsOneClearError(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", "nosuchdb:x"} {
		c := &cluster{t: t, dsn: dsn}
		r := c.run("list")
		if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stderr == "" {
			t.Errorf("list on %s: exit %d, stderr %q; want a failure with one line", dsn, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "panic") {
			t.Errorf("list on %s panicked: %s", dsn, r.stderr)
		}
	}
}

func TestASecondNodeWithTheSameNameIsRefused(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("twin")
	r := c.run("serve", "--node", "twin", "--listen", "127.0.0.1:"+freePort(t))
	if r.code != 1 || !strings.Contains(r.stderr, "already online") {
		t.Fatalf("second serve --node twin: exit %d, stderr %q; want exit 1 saying it is already online", r.code, r.stderr)
	}
	// WATCH would be the machine's slowness, not the refused node.
	if n := c.nodes(); len(n) != 1 || (n[0].State != "ONLINE" && n[0].State != "WATCH") {
		t.Fatalf("the refused node changed the node table: %+v", n)
	}
}

// The key limit is the same on every backend: MariaDB's VARCHAR(255) is the
// narrowest column, and a longer key must be refused before any write
// rather than cut short or rejected halfway by one database only.
func TestKeyLongerThanTheLimitIsRefusedOnEveryBackend(t *testing.T) {
	t.Parallel()
	for name, newCluster := range map[string]func(*testing.T) *cluster{
		"sqlite": sqliteCluster, "postgres": postgresCluster, "mariadb": mysqlCluster,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t)
			c.ok("db", "migrate")
			r := c.run("submit", "--key", strings.Repeat("k", 256), "--type", "noop")
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
				!strings.Contains(r.stderr, "key is longer than 255 characters") {
				t.Errorf("submit --key of 256 characters: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the key",
					r.code, r.stdout, r.stderr)
			}
			if ids := strings.TrimSpace(c.ok("list", "-q")); ids != "" {
				t.Fatalf("the refused submit created jobs: %q", ids)
			}
			key := strings.Repeat("é", 255) // characters, not bytes
			id := c.submit("--key", key, "--type", "noop")
			var j struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &j); err != nil || j.Key != key {
				t.Errorf("job %s has key %q (%v); want the 255 characters given", id, j.Key, err)
			}
		})
	}
}

package commands

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// statsFixture is a one-node cluster: two queued noop jobs, a sleep job
// running on n1, a failed encode job and a queued job of a type no node
// offers.
func statsFixture(t *testing.T) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	if _, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1:7420", MaxLoad: 4, MaxJobs: 200, Weight: 100, Candidate: true,
		Services: []engine.NodeService{{Type: engine.TypeNoop}, {Type: engine.TypeSleep}, {Type: "encode"}},
	}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.store.LeaseAcquire(context.Background(), "n1", time.Minute); err != nil || !ok.Held() {
		t.Fatalf("lease: %v %v", ok, err)
	}
	e.insert(t, engine.JobInsertParams{})
	e.insert(t, engine.JobInsertParams{})
	e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1.5}), engine.StatusRunning)
	e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode"}), engine.StatusRunning, engine.StatusFailed)
	e.insert(t, engine.JobInsertParams{Type: "custom"})
	return e
}

func TestStatsPiped(t *testing.T) {
	e := statsFixture(t)
	if err := e.run(t, "stats"); err != nil {
		t.Fatal(err)
	}
	want := "jobs.total\t5\n" +
		"jobs.by_status.INSTANTIATED\t0\n" +
		"jobs.by_status.QUEUED\t3\n" +
		"jobs.by_status.RESTART\t0\n" +
		"jobs.by_status.RUNNING\t1\n" +
		"jobs.by_status.PAUSED\t0\n" +
		"jobs.by_status.WAITING\t0\n" +
		"jobs.by_status.CANCELLING\t0\n" +
		"jobs.by_status.FINISHED\t0\n" +
		"jobs.by_status.WARNING\t0\n" +
		"jobs.by_status.FAILED\t1\n" +
		"jobs.by_status.CANCELLED\t0\n" +
		"jobs.by_status.DELETED\t0\n" +
		"types.encode.total\t1\n" +
		"types.encode.by_status.FAILED\t1\n" +
		"types.noop.total\t2\n" +
		"types.noop.by_status.QUEUED\t2\n" +
		"types.sleep.total\t1\n" +
		"types.sleep.by_status.RUNNING\t1\n" +
		"other_types.total\t1\n" +
		"other_types.by_status.QUEUED\t1\n" +
		"nodes.n1.state\tONLINE\n" +
		"nodes.n1.maintenance\tfalse\n" +
		"nodes.n1.load\t1.5\n" +
		"nodes.n1.max_load\t4\n" +
		"nodes.n1.running\t1\n" +
		"nodes.n1.max_jobs\t200\n" +
		"nodes.n1.dispatcher\ttrue\n"
	if got := e.stdout.String(); got != want {
		t.Errorf("piped stats:\n%s\nwant:\n%s", got, want)
	}
	if e.stderr.Len() != 0 {
		t.Errorf("stderr: %q", e.stderr.String())
	}
}

func TestStatsTerminal(t *testing.T) {
	e := statsFixture(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "stats"); err != nil {
		t.Fatal(err)
	}
	want := "STATUS   JOBS\n" +
		"QUEUED   3\n" +
		"RUNNING  1\n" +
		"FAILED   1\n" +
		"TOTAL    5\n" +
		"\n" +
		"TYPE           TOTAL  QUEUED  RUNNING  FAILED\n" +
		"encode         1      0       0        1\n" +
		"noop           2      2       0        0\n" +
		"sleep          1      0       1        0\n" +
		"(other types)  1      1       0        0\n" +
		"\n" +
		"NODE  STATE   LOAD   RUNNING  DISPATCHER\n" +
		"n1    ONLINE  1.5/4  1/200    yes\n"
	if got := e.stdout.String(); got != want {
		t.Errorf("terminal stats:\n%s\nwant:\n%s", got, want)
	}
}

func TestStatsEmptyCluster(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "stats"); err != nil {
		t.Fatal(err)
	}
	want := "No jobs.\n\nNo nodes registered; start one with 'jobctl serve'.\n"
	if got := e.stdout.String(); got != want {
		t.Errorf("empty stats:\n%q\nwant:\n%q", got, want)
	}
	e.f.IO.OutIsTerminal = false
	if err := e.run(t, "stats", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if types, nodes := got["types"], got["nodes"]; !reflect.DeepEqual(types, []any{}) || !reflect.DeepEqual(nodes, []any{}) {
		t.Errorf("empty cluster as JSON: types %v, nodes %v; want [] each", types, nodes)
	}
}

func TestStatsJSON(t *testing.T) {
	e := statsFixture(t)
	if err := e.run(t, "stats", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got clusterStats
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, e.stdout.String())
	}
	counts := func(by map[engine.Status]int) jobCounts { return newJobCounts(by) }
	want := clusterStats{
		Jobs: counts(map[engine.Status]int{engine.StatusQueued: 3, engine.StatusRunning: 1, engine.StatusFailed: 1}),
		Types: []typeCounts{
			{"encode", counts(map[engine.Status]int{engine.StatusFailed: 1})},
			{"noop", counts(map[engine.Status]int{engine.StatusQueued: 2})},
			{"sleep", counts(map[engine.Status]int{engine.StatusRunning: 1})},
		},
		OtherTypes: counts(map[engine.Status]int{engine.StatusQueued: 1}),
		Usage:      []engine.TypeUsage{},
		Nodes: []nodeStats{{Name: "n1", State: engine.NodeOnline, Load: 1.5, MaxLoad: 4, Running: 1, MaxJobs: 200,
			Dispatcher: true}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats -o json = %+v\nwant %+v", got, want)
	}
	if len(got.Jobs.ByStatus) != len(engine.AllStatuses) {
		t.Errorf("by_status has %d states; want every one", len(got.Jobs.ByStatus))
	}

	if err := e.run(t, "stats", "--jq", ".jobs.by_status.QUEUED"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != "3\n" {
		t.Errorf("stats --jq .jobs.by_status.QUEUED printed %q; want 3", got)
	}
}

// runMeasured runs a job of typ on n1 to its end, as its node records a
// measured run: cores over wall seconds, and a peak.
func (e *testEnv) runMeasured(t *testing.T, typ string, load, cores, wall float64, peak int64, oom bool) *engine.Job {
	t.Helper()
	j := e.move(t, e.insert(t, engine.JobInsertParams{Type: typ, Load: load}), engine.StatusRunning)
	res := engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit code 0",
		Usage: &engine.Usage{CPUSeconds: cores * wall, WallSeconds: wall, PeakMemory: peak, OOMKilled: oom}}
	if oom {
		res = engine.RunResult{ExitCode: -1, Outcome: engine.RunFailed, Reason: engine.MessageOutOfMemory(64 << 20), Usage: res.Usage}
	}
	j, err := e.store.JobUpdate(context.Background(), engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// usageFixture is the stats fixture with measured runs: six encode runs
// of load 1 using 3 cores (one flagged type), and two mail runs, one of
// them killed at its memory limit (too few to judge).
func usageFixture(t *testing.T) *testEnv {
	t.Helper()
	e := statsFixture(t)
	for i := range 6 {
		e.runMeasured(t, "encode", 1, 3, 10, int64(100+i)<<20, false)
	}
	e.runMeasured(t, "noop", 1, 0.5, 2, 1<<20, false)
	e.runMeasured(t, "noop", 1, 0.5, 4, 64<<20, true)
	return e
}

func TestStatsUsage(t *testing.T) {
	e := usageFixture(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "stats"); err != nil {
		t.Fatal(err)
	}
	want := "TYPE    LOAD  RUNS  CORES P50  CORES P95  MEMORY P95  OOM  CHECK\n" +
		"encode  1     6     3          3          105MiB      0    uses more\n" +
		"noop    1     2     0.5        0.5        64MiB       1    too few runs\n" +
		"! encode: declared load 1, uses 3 cores p95 over 6 runs\n"
	if got := e.stdout.String(); !strings.Contains(got, want) {
		t.Errorf("terminal stats:\n%s\nwant it to hold:\n%s", got, want)
	}

	e.stdout.Reset()
	e.f.IO.OutIsTerminal = false
	if err := e.run(t, "stats", "--runs", "3"); err != nil {
		t.Fatal(err)
	}
	want = "usage.encode.declared_load\t1\n" +
		"usage.encode.runs\t3\n" +
		"usage.encode.cores_p50\t3\n" +
		"usage.encode.cores_p95\t3\n" +
		"usage.encode.memory_p95_bytes\t110100480\n" +
		"usage.encode.wall_p50_seconds\t10\n" +
		"usage.encode.oom_killed\t0\n" +
		"usage.encode.verdict\ttoo-few-runs\n" +
		"usage.noop.declared_load\t1\n" +
		"usage.noop.runs\t2\n" +
		"usage.noop.cores_p50\t0.5\n" +
		"usage.noop.cores_p95\t0.5\n" +
		"usage.noop.memory_p95_bytes\t67108864\n" +
		"usage.noop.wall_p50_seconds\t2\n" +
		"usage.noop.oom_killed\t1\n" +
		"usage.noop.verdict\ttoo-few-runs\n" +
		"nodes.n1.state\t"
	if got := e.stdout.String(); !strings.Contains(got, want) {
		t.Errorf("piped stats --runs 3:\n%s\nwant it to hold:\n%s", got, want)
	}

	// A type whose load is far off has its note too.
	e.stdout.Reset()
	if err := e.run(t, "stats"); err != nil {
		t.Fatal(err)
	}
	if want := "usage.encode.verdict\tuses-more\nusage.encode.note\tencode: declared load 1, uses 3 cores p95 over 6 runs\n"; !strings.Contains(e.stdout.String(), want) {
		t.Errorf("piped stats:\n%s\nwant it to hold %q", e.stdout.String(), want)
	}

	e.stdout.Reset()
	if err := e.run(t, "stats", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got clusterStats
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Usage) != 2 {
		t.Fatalf("usage = %+v, want encode and noop", got.Usage)
	}
	enc := got.Usage[0]
	if enc.Type != "encode" || enc.Runs != 6 || enc.CoresP95 != 3 || enc.Verdict != engine.LoadUsesMore ||
		enc.Note != "encode: declared load 1, uses 3 cores p95 over 6 runs" || enc.WallP50 != 10 {
		t.Errorf("encode usage = %+v", enc)
	}
	if noop := got.Usage[1]; noop.OOMKilled != 1 || noop.Verdict != engine.LoadFewRuns || noop.Note != "" {
		t.Errorf("noop usage = %+v", noop)
	}

	if err := e.run(t, "stats", "--runs", "0"); !errors.As(err, new(*UsageError)) {
		t.Errorf("--runs 0: %v, want a usage error", err)
	}
}

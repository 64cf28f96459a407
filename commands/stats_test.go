package commands

import (
	"context"
	"encoding/json"
	"reflect"
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
	if _, err := e.store.NodeRegister(context.Background(), engine.NodeRegisterParams{Node: engine.Node{
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
	e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1.5}), engine.StatusDispatching, engine.StatusRunning)
	e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode"}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFailed)
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
		"jobs.by_status.DISPATCHING\t0\n" +
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

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
	want := "status\tINSTANTIATED\t0\n" +
		"status\tQUEUED\t3\n" +
		"status\tRESTART\t0\n" +
		"status\tDISPATCHING\t0\n" +
		"status\tRUNNING\t1\n" +
		"status\tPAUSED\t0\n" +
		"status\tWAITING\t0\n" +
		"status\tCANCELLING\t0\n" +
		"status\tFINISHED\t0\n" +
		"status\tWARNING\t0\n" +
		"status\tFAILED\t1\n" +
		"status\tCANCELLED\t0\n" +
		"status\tDELETED\t0\n" +
		"type\tencode\t1\tFAILED=1\n" +
		"type\tnoop\t2\tQUEUED=2\n" +
		"type\tsleep\t1\tRUNNING=1\n" +
		"type\t-\t1\tQUEUED=1\n" +
		"node\tn1\tONLINE\t1.5\t4\t1\t200\tyes\n"
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

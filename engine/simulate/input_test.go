package simulate

import (
	"strings"
	"testing"
	"time"
)

func TestReadNodesDefaultsAndUnits(t *testing.T) {
	t.Parallel()
	nodes, err := ReadNodes(strings.NewReader(`
- name: a
  max_load: 4
  started_ago: 1h
  memory: 16GiB
  cpu: 8
  load_avg: 2.5
- {"name": "b", "max_load": 2.5, "weight": 50, "max_jobs": 3, "services": ["x"], "accept_exceeding": false,
   "started_ago": 90, "warmup": "0s", "memory": 1000, "max_load_avg": 0}
`), "nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := nodes[0], nodes[1]
	if a.MaxJobs != DefaultMaxJobs || a.Weight != DefaultWeight || len(a.Services) != 2 || !*a.AcceptExceeding ||
		time.Duration(*a.Warmup) != DefaultWarmup || time.Duration(a.StartedAgo) != time.Hour || a.Memory != 16<<30 ||
		a.Cores != 8 || a.LoadAvg != 2.5 || a.MaxLoadAvg != nil {
		t.Errorf("a = %+v", a)
	}
	if b.MaxJobs != 3 || b.Weight != 50 || b.Services[0] != "x" || *b.AcceptExceeding || *b.Warmup != 0 ||
		time.Duration(b.StartedAgo) != 90*time.Second || b.Memory != 1000 || *b.MaxLoadAvg != 0 {
		t.Errorf("b = %+v", b)
	}
	if row := newSimNode(&a).row(); row.MaxLoadAvg != 16 || row.Warmup == 0 {
		t.Errorf("a's row: max load average %v, warmup %v; want serve's defaults", row.MaxLoadAvg, row.Warmup)
	}
	if row := newSimNode(&b).row(); row.MaxLoadAvg != 0 || row.AcceptExceeding {
		t.Errorf("b's row = %+v", row)
	}
}

func TestReadInputErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ nodes, jobs, want string }{
		{nodes: "- {name: a, max_load: 1}\n- {name: a, max_load: 2}", want: `node "a" is listed twice`},
		{nodes: "- {max_load: 1}", want: "node 1 has no name"},
		{nodes: "- {name: a, max_load: 1, memory: lots}", want: `line 1: memory "lots" is not a byte count`},
		{nodes: "- {name: a, max_load: 1, started_ago: -5s}", want: `line 1: duration "-5s" is neither`},
		{nodes: "[]", want: "no nodes"},
		{jobs: "- {id: 3}\n- {id: 3}", want: "job 3 is listed twice"},
		{jobs: "- {id: 1, parent: 9}", want: "job 1: parent 9 is not in the workload"},
		{jobs: "- {id: 1, load: -1}", want: "job 1: load -1 is not a number"},
		{jobs: "- {id: 1, duratoin: 3s}", want: "line 1: unknown field duratoin"},
		{jobs: "- {id: one}", want: "line 1: found a string where a number belongs"},
	} {
		var err error
		if c.nodes != "" {
			_, err = ReadNodes(strings.NewReader(c.nodes), "f")
		} else {
			_, err = ReadJobs(strings.NewReader(c.jobs), "f")
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f: ") {
			t.Errorf("%q%q: err = %v; want %q", c.nodes, c.jobs, err, c.want)
		}
	}
}

func TestParentsAndSubmitOrder(t *testing.T) {
	t.Parallel()
	jobs := loadJobs(t, `
- {id: 5, submit_at: 2s}
- {id: 6, submit_at: 1s}
- {id: 7, submit_at: 2s, parent: 5}
`)
	if got := submitOrder(jobs); got[0] != 1 || got[1] != 0 || got[2] != 2 {
		t.Errorf("submit order %v; want by time, ties in list order", got)
	}
	if jobs[0].Type != "sleep" {
		t.Errorf("default type %q", jobs[0].Type)
	}
}

package placement

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestKeep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		job      *engine.Job
		nodes    []*engine.Node
		reserved map[string]int64
		want     string // "" for none
	}{
		{"not oversized", job("sleep", 1), []*engine.Node{mk("a", load(4))}, nil, ""},
		{"the least loaded largest node", job("sleep", 9),
			[]*engine.Node{mk("a", load(2)), mk("b", load(1)), mk("c", maxLoad(2))}, nil, "b"},
		{"ties by name", job("sleep", 9), []*engine.Node{mk("b", load(1)), mk("a", load(1))}, nil, "a"},
		{"never the small accepting node while the largest declines", job("sleep", 10),
			[]*engine.Node{mk("big", maxLoad(8), declinesOversized), mk("small")}, nil, ""},
		{"a declining largest node is passed over", job("sleep", 10),
			[]*engine.Node{mk("strict", maxLoad(8), declinesOversized), mk("lenient", maxLoad(8), load(3))}, nil, "lenient"},
		{"not a node kept for another job", job("sleep", 9),
			[]*engine.Node{mk("a"), mk("b", load(2))}, map[string]int64{"a": 7}, "b"},
		{"the node kept for it stays kept", job("sleep", 9),
			[]*engine.Node{mk("a"), mk("b", load(2))}, map[string]int64{"b": 1}, "b"},
		{"an overloaded node may be kept: it calms down", job("sleep", 9),
			[]*engine.Node{mk("a", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 9, 2 })}, nil, "a"},
		{"not a node in maintenance", job("sleep", 9),
			[]*engine.Node{mk("a", state(engine.NodeMaintenance)), mk("b", maxLoad(2))}, nil, "b"},
		{"every largest node kept for others", job("sleep", 9), []*engine.Node{mk("a")}, map[string]int64{"a": 7}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Filter(tt.job, tt.nodes, FilterOptions{Reserved: tt.reserved})
			got := ""
			if n := p.Keep(tt.job, tt.nodes, tt.reserved); n != nil {
				got = n.Name
			}
			if got != tt.want {
				t.Errorf("Keep = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWaitCause(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{
		mk("t1", types("noop")), mk("t2", types("noop")), mk("t3", types("noop")),
		mk("busy", load(4)), mk("hot", load(4), func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 9, 2 }),
		mk("jobs", running(200)), mk("full", load(4)),
	}
	p := Filter(job("sleep", 1), nodes, FilterOptions{})
	if got := p.WaitCause(); got != CauseBusy {
		t.Errorf("WaitCause = %q; want busy, the most common cause that will pass", got)
	}
	if p.Out(CauseType) != 3 || p.Out(CauseBusy) != 3 || p.NeverRunnable() {
		t.Errorf("counts: type %d, busy %d, never runnable %v", p.Out(CauseType), p.Out(CauseBusy), p.NeverRunnable())
	}
}

func TestFilterIntoAllocatesNothingOnceWarm(t *testing.T) {
	nodes := []*engine.Node{mk("a"), mk("b", load(4)), mk("c", types("noop")), mk("d", state(engine.NodeOffline))}
	j := job("sleep", 1)
	var p Placement
	ns := NewNodes(nodes)
	ns.FilterInto(&p, j, FilterOptions{})
	if allocs := testing.AllocsPerRun(100, func() { ns.FilterInto(&p, j, FilterOptions{}) }); allocs != 0 {
		t.Errorf("FilterInto allocates %v times per job; want none", allocs)
	}
	if len(p.Verdicts) != 0 || len(p.Eligible) != 1 {
		t.Errorf("without Verdicts: %d verdicts, %d eligible", len(p.Verdicts), len(p.Eligible))
	}
}

// Nodes judge a node's silence at the clock each job is filtered at: the
// same nodes filtered at another now are judged again.
func TestNodesJudgeSilenceAtEachNow(t *testing.T) {
	t.Parallel()
	ns := NewNodes([]*engine.Node{mk("quiet", seen(t0.Add(-time.Hour))), mk("heard", seen(t0))})
	var p Placement
	ns.FilterInto(&p, job("sleep", 1), FilterOptions{Now: t0})
	if len(p.Eligible) != 1 || p.Out(CauseSilent) != 1 {
		t.Errorf("at t0: %d eligible, %d silent; want 1 and 1", len(p.Eligible), p.Out(CauseSilent))
	}
	ns.FilterInto(&p, job("sleep", 1), FilterOptions{})
	if len(p.Eligible) != 2 || p.Out(CauseSilent) != 0 {
		t.Errorf("without a clock: %d eligible, %d silent; want 2 and 0", len(p.Eligible), p.Out(CauseSilent))
	}
	ns.FilterInto(&p, job("sleep", 1), FilterOptions{Now: t0.Add(time.Hour)})
	if len(p.Eligible) != 0 || p.Out(CauseSilent) != 2 {
		t.Errorf("an hour on: %d eligible, %d silent; want 0 and 2", len(p.Eligible), p.Out(CauseSilent))
	}
}

func TestVerdictJSONCarriesTheReason(t *testing.T) {
	t.Parallel()
	p := Filter(job("sleep", 1), []*engine.Node{mk("a", load(3.5))}, FilterOptions{Verdicts: true})
	b, err := json.Marshal(p.Verdicts[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"node":"a"`, `"cause":"busy"`, `"load":3.5`, `"reason":"busy: load 3.5 + 1 exceeds max 4"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("verdict JSON %s lacks %s", b, want)
		}
	}
}

package placement

import (
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// vr is the part of a Verdict an operator reads.
type vr struct {
	Node     string
	Eligible bool
	Reason   string
	Cause    Cause
}

func TestFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		job       *engine.Job
		nodes     []*engine.Node
		opts      FilterOptions
		want      []vr
		oversized bool
		largest   float64
		spilled   bool
	}{
		{
			name: "node states",
			job:  job("sleep", 1),
			nodes: []*engine.Node{
				mk("off", state(engine.NodeOffline)), mk("maint", state(engine.NodeMaintenance)),
				mk("err", state(engine.NodeError)), mk("odd", state("DRAINED")), mk("on"),
			},
			want: []vr{
				{Node: "off", Reason: "offline", Cause: CauseState},
				{Node: "maint", Reason: "in maintenance", Cause: CauseState},
				{Node: "err", Reason: "in error state", Cause: CauseState},
				{Node: "odd", Reason: `state "DRAINED"`, Cause: CauseState},
				{Node: "on", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
			},
			largest: 4,
		},
		{
			name: "a node silent past its node lease",
			job:  job("sleep", 1),
			nodes: []*engine.Node{
				mk("quiet", seen(t0.Add(-12*time.Second))),
				mk("short", seen(t0.Add(-3*time.Second)), lease(2*time.Second)),
				mk("heard", seen(t0.Add(-9*time.Second))),
				mk("gone", seen(t0.Add(-time.Hour)), state(engine.NodeOffline)),
			},
			opts: FilterOptions{Now: t0},
			want: []vr{
				{Node: "quiet", Reason: "silent for 12s, past its node lease 10s: it has stopped its runs and takes none until it is heard from", Cause: CauseSilent},
				{Node: "short", Reason: "silent for 3s, past its node lease 2s: it has stopped its runs and takes none until it is heard from", Cause: CauseSilent},
				{Node: "heard", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
				{Node: "gone", Reason: "offline", Cause: CauseState},
			},
			largest: 4,
		},
		{
			name:    "no clock, no silence",
			job:     job("sleep", 1),
			nodes:   []*engine.Node{mk("quiet", seen(t0.Add(-time.Hour)))},
			want:    []vr{{Node: "quiet", Eligible: true, Reason: "has room: load 0 + 1 within max 4"}},
			largest: 4,
		},
		{
			name:  "type not offered",
			job:   job("x", 1),
			nodes: []*engine.Node{mk("a", types("sleep", "noop")), mk("b", types("noop", "x"))},
			want: []vr{
				{Node: "a", Reason: `does not offer type "x"`, Cause: CauseType},
				{Node: "b", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
			},
			largest: 4,
		},
		{
			name: "overloaded by load average",
			job:  job("sleep", 1),
			nodes: []*engine.Node{
				mk("limit", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg, n.Cores = 9.1, 8, 16 }),
				mk("default", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 4.5, engine.DefaultMaxLoadAvg(2) }),
				mk("at-limit", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 4, 4 }),
				mk("no-limit", func(n *engine.Node) { n.LoadAvg, n.Cores = 100, 2 }),
			},
			want: []vr{
				{Node: "limit", Reason: "overloaded: load average 9.1 above 8; it gets work only when no node under its limit can take it", Cause: CauseOverloaded},
				{Node: "default", Reason: "overloaded: load average 4.5 above 4; it gets work only when no node under its limit can take it", Cause: CauseOverloaded},
				{Node: "at-limit", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
				{Node: "no-limit", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
			},
			largest: 4,
		},
		{
			name: "free memory under reserve",
			job:  job("sleep", 1),
			nodes: []*engine.Node{
				mk("low", func(n *engine.Node) { n.MemAvailable, n.ReservedMemory = 120*mib, 300*mib }),
				mk("lowgib", func(n *engine.Node) { n.MemAvailable, n.ReservedMemory = 512*mib, 3*gib/2 }),
				mk("ok", func(n *engine.Node) { n.MemAvailable, n.ReservedMemory = 300*mib, 300*mib }),
				mk("unknown", func(n *engine.Node) { n.ReservedMemory = 300 * mib }),
			},
			want: []vr{
				{Node: "low", Reason: "free memory 120MiB under reserve 300MiB", Cause: CauseLowMemory},
				{Node: "lowgib", Reason: "free memory 512MiB under reserve 1.5GiB", Cause: CauseLowMemory},
				{Node: "ok", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
				{Node: "unknown", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
			},
			largest: 4,
		},
		{
			name: "headroom",
			job:  job("sleep", 1),
			nodes: []*engine.Node{
				mk("busy", load(3.5)), mk("full", load(3)), mk("jobs", running(200)),
				mk("nolimit", running(1000), func(n *engine.Node) { n.MaxJobs = 0 }),
			},
			want: []vr{
				{Node: "busy", Reason: "busy: load 3.5 + 1 exceeds max 4", Cause: CauseBusy},
				{Node: "full", Eligible: true, Reason: "has room: load 3 + 1 within max 4"},
				{Node: "jobs", Reason: "at max jobs (200)", Cause: CauseMaxJobs},
				{Node: "nolimit", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
			},
			largest: 4,
		},
		{
			name:  "float rounding does not cost a fit",
			job:   job("sleep", 0.1),
			nodes: []*engine.Node{mk("a", maxLoad(0.3), load(0.2))},
			want: []vr{
				{Node: "a", Eligible: true, Reason: "has room: load 0.2 + 0.1 within max 0.3"},
			},
			largest: 0.3,
		},
		{
			name:  "first child needs no headroom",
			job:   job("sleep", 1),
			nodes: []*engine.Node{mk("busy", load(3.5)), mk("jobs", running(200)), mk("off", state(engine.NodeOffline))},
			opts:  FilterOptions{FirstChild: true},
			want: []vr{
				{Node: "busy", Eligible: true, Reason: "first child: may queue ahead (load 3.5, max 4)"},
				{Node: "jobs", Eligible: true, Reason: "first child: may queue ahead (load 0, max 4)"},
				{Node: "off", Reason: "offline", Cause: CauseState},
			},
			largest: 4,
		},
		{
			name:  "reserved nodes are skipped by other jobs only",
			job:   job("sleep", 1),
			nodes: []*engine.Node{mk("r7"), mk("r1"), mk("free")},
			opts:  FilterOptions{Reserved: map[string]int64{"r7": 7, "r1": 1}},
			want: []vr{
				{Node: "r7", Reason: "kept for oversized job 7", Cause: CauseReserved},
				{Node: "r1", Eligible: true, Reason: "has room: load 0 + 1 within max 4; kept for this job"},
				{Node: "free", Eligible: true, Reason: "has room: load 0 + 1 within max 4"},
			},
			largest: 4,
		},
		{
			name:  "a node too small while a larger one exists",
			job:   job("sleep", 5),
			nodes: []*engine.Node{mk("small", maxLoad(2)), mk("big", maxLoad(8))},
			opts:  FilterOptions{FirstChild: true},
			want: []vr{
				{Node: "small", Reason: "max load 2 below job load 5", Cause: CauseTooSmall},
				{Node: "big", Eligible: true, Reason: "first child: may queue ahead (load 0, max 8)"},
			},
			largest: 8,
		},
		{
			name: "oversized: only the idle largest nodes",
			job:  job("sleep", 5),
			nodes: []*engine.Node{
				mk("idle"), mk("busy", load(1), running(1)), mk("small", maxLoad(2)),
				mk("hot", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 9, 8 }),
				mk("big-off", maxLoad(16), state(engine.NodeOffline)),
				mk("big-other", maxLoad(16), types("noop")),
			},
			want: []vr{
				{Node: "idle", Eligible: true, Reason: "idle: runs the oversized job (load 5 above max 4) alone"},
				{Node: "busy", Reason: "busy: job load 5 is above max 4, so it waits until the node is idle (load now 1)", Cause: CauseBusy},
				{Node: "small", Reason: "max load 2 below job load 5; only the largest nodes (max load 4) take it", Cause: CauseTooSmall},
				{Node: "hot", Reason: "overloaded: load average 9 above 8; it gets work only when no node under its limit can take it", Cause: CauseOverloaded},
				{Node: "big-off", Reason: "offline", Cause: CauseState},
				{Node: "big-other", Reason: `does not offer type "sleep"`, Cause: CauseType},
			},
			oversized: true,
			largest:   4,
		},
		{
			name:  "oversized first child still waits for an idle node",
			job:   job("sleep", 5),
			nodes: []*engine.Node{mk("busy", load(0.5))},
			opts:  FilterOptions{FirstChild: true},
			want: []vr{
				{Node: "busy", Reason: "busy: job load 5 is above max 4, so it waits until the node is idle (load now 0.5)", Cause: CauseBusy},
			},
			oversized: true,
			largest:   4,
		},
		{
			name:  "oversized: largest node declining oversized jobs",
			job:   job("sleep", 5),
			nodes: []*engine.Node{mk("strict", declinesOversized), mk("lenient")},
			want: []vr{
				{Node: "strict", Reason: "declines jobs above its max load 4 (accept-exceeding is off)", Cause: CauseDeclinesOversized},
				{Node: "lenient", Eligible: true, Reason: "idle: runs the oversized job (load 5 above max 4) alone"},
			},
			oversized: true,
			largest:   4,
		},
		{
			name:  "oversized: a reservation binds the largest node to its job",
			job:   job("sleep", 5),
			nodes: []*engine.Node{mk("a"), mk("b")},
			opts:  FilterOptions{Reserved: map[string]int64{"a": 9}},
			want: []vr{
				{Node: "a", Reason: "kept for oversized job 9", Cause: CauseReserved},
				{Node: "b", Eligible: true, Reason: "idle: runs the oversized job (load 5 above max 4) alone"},
			},
			oversized: true,
			largest:   4,
		},
		{
			name: "a passing load spike on the big node does not make a job oversized",
			job:  job("sleep", 6),
			nodes: []*engine.Node{
				mk("big", maxLoad(8), func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 20, 16 }),
				mk("small"),
			},
			want: []vr{
				{Node: "big", Eligible: true, Reason: "has room: load 0 + 6 within max 8; load average 20 above 16, but no node under its limit can take it"},
				{Node: "small", Reason: "max load 4 below job load 6", Cause: CauseTooSmall},
			},
			largest: 8,
			spilled: true,
		},
		{
			name:  "a lone node above its load-average limit still takes work",
			job:   job("sleep", 1),
			nodes: []*engine.Node{mk("lone", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 16.58, 4 })},
			want: []vr{
				{Node: "lone", Eligible: true, Reason: "has room: load 0 + 1 within max 4; load average 16.58 above 4, but no node under its limit can take it"},
			},
			largest: 4,
			spilled: true,
		},
		{
			name: "the load-average gate gives way only to nodes that have room",
			job:  job("sleep", 1),
			nodes: []*engine.Node{
				mk("calm-full", load(4)),
				mk("hot", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 9, 4 }),
				mk("hot-full", load(4), func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 9, 4 }),
				mk("hot-short", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg, n.MemAvailable, n.ReservedMemory = 9, 4, mib, gib }),
				mk("hotter", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 30, 4 }),
			},
			want: []vr{
				{Node: "calm-full", Reason: "busy: load 4 + 1 exceeds max 4", Cause: CauseBusy},
				{Node: "hot", Eligible: true, Reason: "has room: load 0 + 1 within max 4; load average 9 above 4, but no node under its limit can take it"},
				{Node: "hot-full", Reason: "busy: load 4 + 1 exceeds max 4", Cause: CauseBusy},
				{Node: "hot-short", Reason: "free memory 1MiB under reserve 1GiB", Cause: CauseLowMemory},
				{Node: "hotter", Eligible: true, Reason: "has room: load 0 + 1 within max 4; load average 30 above 4, but no node under its limit can take it"},
			},
			largest: 4,
			spilled: true,
		},
		{
			name:  "a first child spills onto an overloaded node as it would onto a calm one",
			job:   job("sleep", 1),
			nodes: []*engine.Node{mk("hot", load(4), func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 9, 4 })},
			opts:  FilterOptions{FirstChild: true},
			want: []vr{
				{Node: "hot", Eligible: true, Reason: "first child: may queue ahead (load 4, max 4); load average 9 above 4, but no node under its limit can take it"},
			},
			largest: 4,
			spilled: true,
		},
		{
			name:  "no nodes",
			job:   job("sleep", 1),
			nodes: nil,
			want:  []vr{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.Verdicts = true
			p := Filter(tt.job, tt.nodes, opts)
			got := make([]vr, len(p.Verdicts))
			for i, v := range p.Verdicts {
				got[i] = vr{v.Node, v.Eligible, v.Reason(), v.Cause}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("verdicts:\n got %+v\nwant %+v", got, tt.want)
			}
			var wantEligible []string
			for _, v := range tt.want {
				if v.Eligible {
					wantEligible = append(wantEligible, v.Node)
				}
			}
			if got := names(p.Eligible); !slices.Equal(got, wantEligible) {
				t.Errorf("eligible = %v, want %v", got, wantEligible)
			}
			if p.Oversized != tt.oversized {
				t.Errorf("oversized = %v, want %v", p.Oversized, tt.oversized)
			}
			if p.Spilled != tt.spilled {
				t.Errorf("spilled = %v, want %v", p.Spilled, tt.spilled)
			}
			for _, v := range p.Verdicts {
				if v.Eligible != (v.Terms != "") {
					t.Errorf("node %s: eligible %v with terms %q; terms go with eligibility", v.Node, v.Eligible, v.Terms)
				}
			}
			if p.LargestMaxLoad != tt.largest {
				t.Errorf("largest max load = %v, want %v", p.LargestMaxLoad, tt.largest)
			}
		})
	}
}

func TestFilterEligibleAreTheInputNodes(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{mk("a", load(1)), mk("b", state(engine.NodeOffline)), mk("c")}
	p := Filter(job("sleep", 1), nodes, FilterOptions{})
	if len(p.Eligible) != 2 || p.Eligible[0] != nodes[0] || p.Eligible[1] != nodes[2] {
		t.Fatalf("eligible = %v, want the pointers of a and c", names(p.Eligible))
	}
}

func TestNeverRunnable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		job   *engine.Job
		nodes []*engine.Node
		want  bool
	}{
		{"no nodes", job("sleep", 1), nil, true},
		{"nobody offers the type", job("x", 1), []*engine.Node{mk("a"), mk("b")}, true},
		{"only offline nodes offer it", job("sleep", 1), []*engine.Node{mk("a", state(engine.NodeOffline)), mk("b", types("noop"))}, true},
		{"a busy node will free up", job("sleep", 1), []*engine.Node{mk("a", load(4))}, false},
		{"an overloaded node will calm down", job("sleep", 1), []*engine.Node{mk("a", func(n *engine.Node) { n.LoadAvg, n.MaxLoadAvg = 50, 2 })}, false},
		{"a reserved node will be released", job("sleep", 1), []*engine.Node{mk("a")}, false},
		{"oversized, every largest node declines", job("sleep", 9), []*engine.Node{mk("a", declinesOversized), mk("b", declinesOversized), mk("c", maxLoad(1))}, true},
		{"oversized, one largest node accepts", job("sleep", 9), []*engine.Node{mk("a", declinesOversized), mk("b", load(2))}, false},
		{"eligible now", job("sleep", 1), []*engine.Node{mk("a")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := FilterOptions{Reserved: map[string]int64{}, Verdicts: true}
			if tt.name == "a reserved node will be released" {
				opts.Reserved["a"] = 99
			}
			p := Filter(tt.job, tt.nodes, opts)
			if got := p.NeverRunnable(); got != tt.want {
				t.Errorf("NeverRunnable = %v, want %v; verdicts %+v", got, tt.want, p.Verdicts)
			}
			if got := NeverRunnable(p.Verdicts); got != tt.want {
				t.Errorf("NeverRunnable(verdicts) = %v, want %v", got, tt.want)
			}
		})
	}
}

// Out is how many nodes the cause kept out.
func (p *Placement) Out(c Cause) int { return p.out[c.index()] }

// NeverRunnable reports whether no node of the cluster as it is could ever
// take the job: every node is out for a permanent cause (none ONLINE offers
// the type, or the job is oversized and every largest node declines
// oversized jobs). An empty cluster never runs anything.
func NeverRunnable(verdicts []Verdict) bool {
	for _, v := range verdicts {
		if v.Eligible || !v.Cause.Permanent() {
			return false
		}
	}
	return true
}

// Every cause is counted at its own place in causeOrder.
func TestCauseIndexIsItsPlace(t *testing.T) {
	for i, c := range causeOrder {
		if got := c.index(); got != i {
			t.Errorf("Cause(%q).index() = %d, want its place %d in causeOrder", c, got, i)
		}
	}
}

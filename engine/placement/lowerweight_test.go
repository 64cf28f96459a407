package placement

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestLowerWeightCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		node *engine.Node
		want float64
	}{
		{
			name: "all reported",
			node: mk("n", func(n *engine.Node) { n.LoadAvg, n.Cores, n.MemAvailable = 2, 4, 3*gib }),
			// pressure 2/4 = 0.5, memory 1/(1+3) = 0.25, cores 1/4
			want: 0.7*0.5 + 0.2*0.25 + 0.1*0.25,
		},
		{
			name: "live load factor above load average",
			node: mk("n", load(3), func(n *engine.Node) { n.LoadAvg, n.Cores = 1, 4 }),
			want: 0.7*0.75 + 0.1*0.25,
		},
		{
			name: "nothing reported",
			node: mk("n"),
			want: 0.1,
		},
		{
			name: "heavier node is cheaper",
			node: mk("n", weight(200)),
			want: 0.05,
		},
		{
			name: "half warmed up",
			node: mk("n", warm(5*time.Minute, 10*time.Minute)),
			want: 0.1 * 100 / 50.5,
		},
		{
			name: "weight 0",
			node: mk("n", weight(0)),
			want: math.Inf(1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := LowerWeightCost(tt.node, t0); math.Abs(got-tt.want) > 1e-12 && got != tt.want {
				t.Errorf("cost = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLowerWeightOrder(t *testing.T) {
	t.Parallel()
	report := func(avg float64, cores int, mem int64) func(*engine.Node) {
		return func(n *engine.Node) { n.LoadAvg, n.Cores, n.MemAvailable = avg, cores, mem }
	}
	nodes := []*engine.Node{
		mk("loaded", report(6, 8, 8*gib)),
		mk("tight", report(1, 8, 256*mib)),
		mk("cold", report(0, 8, 8*gib), warm(time.Minute, 10*time.Minute)),
		mk("idle-b", report(0, 8, 8*gib)),
		mk("idle-a", report(0, 8, 8*gib)),
		mk("small", report(0, 1, 8*gib)),
		mk("off", weight(0)),
	}
	in := slices.Clone(nodes)
	want := []string{"idle-a", "idle-b", "small", "tight", "cold", "loaded", "off"}
	if got := names(LowerWeight{}.Order(nil, nodes, t0)); !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if !slices.Equal(in, nodes) {
		t.Errorf("Order changed its input")
	}
}

package placement

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestEffectiveWeight(t *testing.T) {
	t.Parallel()
	const warmup = 10 * time.Minute
	tests := []struct {
		name string
		node *engine.Node
		want float64
	}{
		{"just started", mk("n", warm(0, warmup)), 1},
		{"a quarter in", mk("n", warm(warmup/4, warmup)), 1 + 99.0/4},
		{"halfway", mk("n", warm(warmup/2, warmup)), 50.5},
		{"warmed up", mk("n", warm(warmup, warmup)), 100},
		{"long running", mk("n", warm(24*time.Hour, warmup)), 100},
		{"clock behind the start", mk("n", warm(-time.Minute, warmup)), 1},
		{"no warm-up", mk("n", warm(0, 0)), 100},
		{"unknown start", mk("n", func(n *engine.Node) { n.Warmup = engine.Duration(warmup) }), 100},
		{"custom weight halfway", mk("n", weight(21), warm(warmup/2, warmup)), 11},
		{"weight 1 has nothing to ramp", mk("n", weight(1), warm(0, warmup)), 1},
		{"weight 0", mk("n", weight(0), warm(warmup, warmup)), 0},
		{"negative weight", mk("n", weight(-5)), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := EffectiveWeight(tt.node, t0); got != tt.want {
				t.Errorf("EffectiveWeight = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEffectiveWeightRampIsMonotone(t *testing.T) {
	t.Parallel()
	n := mk("n", warm(0, time.Hour))
	prev := 0.0
	for m := 0; m <= 70; m++ {
		w := EffectiveWeight(n, t0.Add(time.Duration(m)*time.Minute))
		if w < prev || w < 1 || w > 100 {
			t.Fatalf("minute %d: weight %v after %v", m, w, prev)
		}
		prev = w
	}
	if prev != 100 {
		t.Fatalf("weight after warm-up = %v, want 100", prev)
	}
}

package placement

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestRandomFollowsWeights(t *testing.T) {
	t.Parallel()
	r := NewRandom(rand.New(rand.NewPCG(1, 2)))
	nodes := []*engine.Node{mk("a", weight(5)), mk("b", weight(1)), mk("c", weight(1))}
	const draws = 14000
	first := map[string]int{}
	for range draws {
		order := r.Order(nil, nodes, t0)
		if len(order) != len(nodes) {
			t.Fatalf("order %v is not a permutation of the nodes", names(order))
		}
		first[order[0].Name]++
	}
	want := map[string]int{"a": draws * 5 / 7, "b": draws / 7, "c": draws / 7}
	for name, w := range want {
		if d := first[name] - w; d < -draws*3/100 || d > draws*3/100 {
			t.Errorf("%s first %d times in %d draws, want about %d", name, first[name], draws, w)
		}
	}
}

func TestRandomIsRepeatableWithASeed(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{mk("a"), mk("b"), mk("c"), mk("d")}
	r1, r2 := NewRandom(rand.New(rand.NewPCG(7, 7))), NewRandom(rand.New(rand.NewPCG(7, 7)))
	for range 50 {
		if a, b := names(r1.Order(nil, nodes, t0)), names(r2.Order(nil, nodes, t0)); !slices.Equal(a, b) {
			t.Fatalf("same seed, different orders: %v vs %v", a, b)
		}
	}
}

func TestRandomPutsUnweightedNodesLast(t *testing.T) {
	t.Parallel()
	r := NewRandom(rand.New(rand.NewPCG(3, 4)))
	nodes := []*engine.Node{mk("z1", weight(0)), mk("w1", weight(1)), mk("z2", weight(0)), mk("w2", weight(1))}
	in := slices.Clone(nodes)
	seen := map[string]bool{}
	for range 200 {
		order := names(r.Order(nil, nodes, t0))
		if !slices.Contains(order[:2], "w1") || !slices.Contains(order[:2], "w2") {
			t.Fatalf("order %v: weighted nodes are not first", order)
		}
		seen[order[2]] = true
	}
	if !seen["z1"] || !seen["z2"] {
		t.Errorf("unweighted nodes not shuffled among themselves: third places %v", seen)
	}
	if !slices.Equal(in, nodes) {
		t.Errorf("Order changed its input")
	}
}

func TestRandomHonoursWarmUp(t *testing.T) {
	t.Parallel()
	r := NewRandom(rand.New(rand.NewPCG(5, 6)))
	// A node that just started weighs 1 against 100: it should almost never
	// come first (expected 1 in 101).
	nodes := []*engine.Node{mk("cold", warm(0, 10*time.Minute)), mk("warm")}
	cold := 0
	for range 2000 {
		if r.Order(nil, nodes, t0)[0].Name == "cold" {
			cold++
		}
	}
	if cold > 60 {
		t.Errorf("warming-up node first %d times in 2000, want about 20", cold)
	}
}

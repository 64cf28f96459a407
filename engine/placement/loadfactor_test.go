package placement

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/jobctl/jobctl/engine"
)

func TestLoadFactorOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		load, max, want float64
	}{
		{2, 4, 0.5},
		{0, 4, 0},
		{6, 4, 1.5},
		{0, 0, 0},
		{1, 0, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := LoadFactorOf(mk("n", load(tt.load), maxLoad(tt.max))); got != tt.want {
			t.Errorf("LoadFactorOf(load %v, max %v) = %v, want %v", tt.load, tt.max, got, tt.want)
		}
	}
}

func TestLoadFactorBucketKeepsWholeHundredths(t *testing.T) {
	t.Parallel()
	// 0.29/0.01 is 28.999… in floats; the bucket must still be 29.
	for i := range 300 {
		lf := float64(i) / 100
		if got := loadFactorBucket(lf); got != float64(i) {
			t.Errorf("bucket(%v) = %v, want %d", lf, got, i)
		}
	}
}

func TestLoadFactorOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []*engine.Node
		want  []string
	}{
		{
			name:  "least loaded first",
			nodes: []*engine.Node{mk("a", load(3)), mk("b", load(1)), mk("c", load(2))},
			want:  []string{"b", "c", "a"},
		},
		{
			name:  "relative to max load",
			nodes: []*engine.Node{mk("small", maxLoad(2), load(1)), mk("big", maxLoad(16), load(4))},
			want:  []string{"big", "small"},
		},
		{
			name:  "near tie goes to the larger max load",
			nodes: []*engine.Node{mk("small", maxLoad(4), load(2)), mk("big", maxLoad(8), load(4.04))},
			want:  []string{"big", "small"},
		},
		{
			name:  "exact tie on load factor and max load: lower load factor, then name",
			nodes: []*engine.Node{mk("b", load(1.01)), mk("c", load(1)), mk("a", load(1))},
			want:  []string{"a", "c", "b"},
		},
		{
			name:  "no max load sorts last unless empty",
			nodes: []*engine.Node{mk("zero", maxLoad(0), load(1)), mk("empty", maxLoad(0)), mk("full", load(4))},
			want:  []string{"empty", "full", "zero"},
		},
		{
			// Pairwise tolerance would make a cycle here: a~b (b first),
			// b~c (c first) but a<c. Buckets give one answer.
			name: "transitive where pairwise tolerance is not",
			nodes: []*engine.Node{
				mk("a", maxLoad(100), load(0)), mk("b", maxLoad(200), load(1.6)), mk("c", maxLoad(400), load(6.4)),
			},
			want: []string{"b", "a", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := slices.Clone(tt.nodes)
			got := names(LoadFactor{}.Order(nil, tt.nodes, t0))
			if !slices.Equal(got, tt.want) {
				t.Errorf("order = %v, want %v", got, tt.want)
			}
			if !slices.Equal(in, tt.nodes) {
				t.Errorf("Order changed its input")
			}
			slices.Reverse(in)
			if got := names(LoadFactor{}.Order(nil, in, t0)); !slices.Equal(got, tt.want) {
				t.Errorf("order of reversed input = %v, want %v", got, tt.want)
			}
		})
	}
}

// genNode draws a node with load factors that often sit on or near bucket
// edges, and max loads that often tie.
var genNode = rapid.Custom(func(t *rapid.T) *engine.Node {
	n := &engine.Node{
		Name:    rapid.StringMatching(`[a-f]{1,3}`).Draw(t, "name"),
		MaxLoad: rapid.SampledFrom([]float64{0, 0.3, 1, 2, 3, 4, 8, 16}).Draw(t, "max"),
	}
	if rapid.Bool().Draw(t, "steps") {
		n.Load = float64(rapid.IntRange(0, 400).Draw(t, "k")) * 0.005 * max(n.MaxLoad, 1)
	} else {
		n.Load = rapid.Float64Range(0, 20).Draw(t, "load")
	}
	return n
})

var genNodeSet = rapid.SliceOfNDistinct(genNode, 2, 14, func(n *engine.Node) string { return n.Name })

// desc names a node in a failure message by the fields the order reads.
func desc(n *engine.Node) string {
	return fmt.Sprintf("%s(load %v, max %v)", n.Name, n.Load, n.MaxLoad)
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// TestCompareLoadFactorIsStrictTotalOrder checks the order properties over
// a few thousand random node sets (sets per check × rapid's checks).
func TestCompareLoadFactorIsStrictTotalOrder(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		for range 25 {
			nodes := genNodeSet.Draw(t, "nodes")
			for _, a := range nodes {
				if c := CompareLoadFactor(a, a); c != 0 {
					t.Fatalf("not irreflexive: compare(%s, itself) = %d", desc(a), c)
				}
				for _, b := range nodes {
					ab, ba := CompareLoadFactor(a, b), CompareLoadFactor(b, a)
					if sign(ab) != -sign(ba) {
						t.Fatalf("not antisymmetric: compare(%s, %s) = %d, reversed %d", desc(a), desc(b), ab, ba)
					}
					if a != b && ab == 0 {
						t.Fatalf("not total: %s and %s compare equal", desc(a), desc(b))
					}
					for _, c := range nodes {
						if ab < 0 && CompareLoadFactor(b, c) < 0 && CompareLoadFactor(a, c) >= 0 {
							t.Fatalf("not transitive: %s < %s < %s, but not the first < the last", desc(a), desc(b), desc(c))
						}
					}
				}
			}
			want := names(LoadFactor{}.Order(nil, nodes, t0))
			perm := rapid.Permutation(nodes).Draw(t, "perm")
			sorted := LoadFactor{}.Order(nil, perm, t0)
			if got := names(sorted); !slices.Equal(got, want) {
				t.Fatalf("order depends on input order: %v vs %v", got, want)
			}
			for i := range sorted {
				for j := i + 1; j < len(sorted); j++ {
					if CompareLoadFactor(sorted[i], sorted[j]) >= 0 {
						t.Fatalf("sorted[%d]=%s not before sorted[%d]=%s", i, sorted[i].Name, j, sorted[j].Name)
					}
				}
			}
		}
	})
}

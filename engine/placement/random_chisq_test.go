package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// chiSquare2 is the chi-square critical value for 2 degrees of freedom at
// p = 0.001: a fair sampler exceeds it once in a thousand seeds.
const chiSquare2 = 13.82

// Weighted random order matches its weights in first and in second place
// (sampling without replacement), within a chi-square bound, whether drawn
// by Order or by Pick then Rest.
func TestRandomMatchesItsWeightsByChiSquare(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{mk("a", weight(5)), mk("b", weight(1)), mk("c", weight(1))}
	// First place: 5/7, 1/7, 1/7. Second place: a after b or c (2/7 · 5/6),
	// b after a (5/7 · 1/2) or after c (1/7 · 1/6), c likewise.
	want := [2]map[string]float64{
		{"a": 5.0 / 7, "b": 1.0 / 7, "c": 1.0 / 7},
		{"a": 5.0 / 21, "b": 8.0 / 21, "c": 8.0 / 21},
	}
	for _, seed := range []uint64{1, 2, 3} {
		r := NewRandom(rand.New(rand.NewPCG(seed, seed+1)))
		const draws = 20000
		var seen [2]map[string]int
		seen[0], seen[1] = map[string]int{}, map[string]int{}
		for i := range draws {
			// Half the draws the way the dispatcher makes them: Pick,
			// then Rest after a decline.
			order := r.Order(nil, nodes, t0)
			if i%2 == 1 {
				first := r.Pick(nil, nodes, t0)
				order = append([]*engine.Node{first}, r.Rest(nil, nodes, first, t0)...)
			}
			seen[0][order[0].Name]++
			seen[1][order[1].Name]++
		}
		for place := range 2 {
			var chi float64
			for name, p := range want[place] {
				expected := p * draws
				d := float64(seen[place][name]) - expected
				chi += d * d / expected
			}
			if chi > chiSquare2 {
				t.Errorf("seed %d, place %d: counts %v give chi-square %.2f above %.2f for weights 5, 1, 1",
					seed, place+1, seen[place], chi, chiSquare2)
			}
		}
	}
}

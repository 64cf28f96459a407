package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// For every Picker, Pick then Rest is Order: the same nodes in the same
// order, call after call, and the same state left behind.
func TestPickThenRestIsOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 9))
	var pool []*engine.Node
	for i := range 12 {
		pool = append(pool, mk(fmt.Sprintf("n%02d", i), maxLoad(float64(1+r.IntN(4))), load(float64(r.IntN(4))),
			weight(r.IntN(3)*50), func(n *engine.Node) { n.LoadAvg, n.Cores = float64(r.IntN(8)), 1+r.IntN(4) }))
	}
	for _, name := range SelectorNames {
		ordered, err := ParseSelector(name)
		if err != nil {
			t.Fatal(err)
		}
		picked, _ := ParseSelector(name)
		pk, ok := picked.(Picker)
		if !ok || name == SelectorRandom { // random: same chances, not the same draws
			continue
		}
		for trial := range 300 {
			nodes := slices.Clone(pool)
			r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
			nodes = nodes[:1+r.IntN(len(nodes))]
			want := names(ordered.Order(nil, nodes, t0))
			first := pk.Pick(nil, nodes, t0)
			got := append([]string{first.Name}, names(pk.Rest(nil, nodes, first, t0))...)
			if !slices.Equal(got, want) {
				t.Fatalf("%s trial %d: Pick then Rest %v, Order %v", name, trial, got, want)
			}
		}
		if pk.Pick(nil, nil, t0) != nil {
			t.Errorf("%s: Pick of no nodes is not nil", name)
		}
	}
}

package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// A Picker's Best is the first node of its Order, and changes nothing.
func TestBestIsTheFirstOfOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 9))
	for _, name := range SelectorNames {
		sel, err := ParseSelector(name)
		if err != nil {
			t.Fatal(err)
		}
		pk, ok := sel.(Picker)
		if !ok {
			continue
		}
		for trial := range 200 {
			nodes := make([]*engine.Node, 1+r.IntN(12))
			for i := range nodes {
				nodes[i] = mk(fmt.Sprintf("n%d", r.IntN(100)), maxLoad(float64(1+r.IntN(4))), load(float64(r.IntN(4))),
					weight(r.IntN(3)*50), func(n *engine.Node) { n.LoadAvg, n.Cores = float64(r.IntN(8)), 1+r.IntN(4) })
				nodes[i].Name += fmt.Sprintf("-%d", i) // distinct names
			}
			if best, first := pk.Best(nil, nodes, t0), sel.Order(nil, nodes, t0)[0]; best != first {
				t.Fatalf("%s trial %d: Best %s, Order starts with %s", name, trial, best.Name, first.Name)
			}
		}
		if pk.Best(nil, nil, t0) != nil {
			t.Errorf("%s: Best of no nodes is not nil", name)
		}
	}
}

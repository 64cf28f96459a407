package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// BenchmarkPlace measures the per-job placement work of a dispatch round:
// filtering a cluster's nodes and ordering the eligible ones.
func BenchmarkPlace(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{10, 100, 1000} {
		nodes := make([]*engine.Node, size)
		for i := range nodes {
			nodes[i] = mk(fmt.Sprintf("n%04d", i), maxLoad(float64(1+r.IntN(16))), load(float64(r.IntN(8))))
		}
		job := &engine.Job{ID: 1, Type: "sleep", Load: 1}
		for _, name := range SelectorNames {
			sel, err := ParseSelector(name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("nodes=%d/%s", size, name), func(b *testing.B) {
				for b.Loop() {
					p := Filter(job, nodes, FilterOptions{})
					_ = sel.Order(job, p.Eligible, t0)
				}
			})
		}
	}
}

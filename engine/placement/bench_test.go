package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func benchNodes(size int) []*engine.Node {
	r := rand.New(rand.NewPCG(1, 2))
	nodes := make([]*engine.Node, size)
	for i := range nodes {
		nodes[i] = mk(fmt.Sprintf("n%04d", i), maxLoad(float64(1+r.IntN(16))), load(float64(r.IntN(8))))
	}
	return nodes
}

// BenchmarkPlace measures filtering a cluster's nodes for one job and
// ordering the eligible ones, as a caller without a round's reuse does.
func BenchmarkPlace(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		nodes := benchNodes(size)
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

// BenchmarkPlaceInRound measures the per-job placement work of a dispatch
// round: FilterInto against the round's Nodes on a reused Placement, then
// the first choice alone where the selector can name it (Picker), else the
// whole order.
func BenchmarkPlaceInRound(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		nodes := benchNodes(size)
		job := &engine.Job{ID: 1, Type: "sleep", Load: 1}
		for _, name := range SelectorNames {
			sel, err := ParseSelector(name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("nodes=%d/%s", size, name), func(b *testing.B) {
				var p Placement
				ns := NewNodes(nodes)
				for b.Loop() {
					ns.FilterInto(&p, job, FilterOptions{})
					if pk, ok := sel.(Picker); ok {
						_ = pk.Pick(job, p.Eligible, t0)
					} else {
						_ = sel.Order(job, p.Eligible, t0)
					}
				}
			})
		}
	}
}

// BenchmarkFilterExplain measures Filter with every verdict, as `jobctl
// explain` asks for it, and the reasons worded.
func BenchmarkFilterExplain(b *testing.B) {
	nodes := benchNodes(100)
	job := &engine.Job{ID: 1, Type: "sleep", Load: 1}
	for b.Loop() {
		p := Filter(job, nodes, FilterOptions{Verdicts: true})
		for _, v := range p.Verdicts {
			_ = v.Reason()
		}
	}
}

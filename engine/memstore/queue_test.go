package memstore_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// A page of the jobs in a load range is the queue's jobs in that range in
// dispatch order, however the loads and priorities mix: with few loads the
// store reads each load's run of its load index, with many it walks the
// queue, and both must give what the walk gives.
func TestDispatchablePageByLoad(t *testing.T) {
	t.Parallel()
	for _, loads := range [][]float64{
		{1, 2, 3, 4},
		{0.5, 1, 1.5, 4, 7, 20},
		{1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.25, 3.5}, // more than the store merges
	} {
		t.Run(fmt.Sprint(loads), func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			rng := rand.New(rand.NewPCG(1, uint64(len(loads))))
			var queued []*engine.Job
			for range 400 {
				j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued,
					Load: loads[rng.IntN(len(loads))], Priority: 40 + rng.IntN(3)*10})
				if err != nil {
					t.Fatal(err)
				}
				queued = append(queued, j)
			}
			slices.SortFunc(queued, func(a, b *engine.Job) int {
				return cmp.Compare(b.Priority, a.Priority)*2 + cmp.Compare(a.ID, b.ID)
			})
			for _, r := range []struct {
				above *float64
				max   float64
			}{{nil, 1}, {nil, 1.5}, {nil, 3}, {nil, 100}, {engine.Ptr(1.0), 3}, {engine.Ptr(1.5), 2.2}, {nil, 0.1}} {
				for _, limit := range []int{1, 7, 1000} {
					want := []int64{}
					for _, j := range queued {
						if j.Load <= r.max && (r.above == nil || j.Load > *r.above) {
							want = append(want, j.ID)
						}
					}
					// Page through the queue as a round does, after the
					// last job of the page before.
					var got []int64
					var after engine.QueuePlace
					for {
						page, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: engine.StatusQueued,
							Type: "noop", Limit: limit, MaxLoad: engine.Ptr(r.max), LoadAbove: r.above, After: after})
						if err != nil {
							t.Fatal(err)
						}
						for _, j := range page {
							got = append(got, j.ID)
						}
						if len(page) < limit {
							break
						}
						after = engine.PlaceOf(page[len(page)-1])
					}
					if !slices.Equal(got, want) {
						t.Errorf("loads above %v up to %v, pages of %d: got %v\nwant %v", r.above, r.max, limit, got, want)
					}
				}
			}
		})
	}
}

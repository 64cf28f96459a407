package memstore_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/storetest"
)

func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	// Each subtest has a store of its own on a clock of its own; the
	// Advance hook finds the clock by the store.
	var clocks sync.Map // engine.Store → *engine.VirtualClock
	storetest.RunWith(t, func(t *testing.T) engine.Store {
		clock := engine.NewVirtualClock(time.Now())
		s := memstore.New(clock)
		clocks.Store(s, clock)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.Options{Advance: func(s engine.Store, d time.Duration) {
		c, _ := clocks.Load(s)
		c.(*engine.VirtualClock).Advance(d)
	}})
}

// BenchmarkDispatchablePage reads pages of 100 dispatchable jobs from a
// store holding a million queued jobs, as the simulator's dispatcher does
// every round: with a tenth of the jobs under 100 keys, and with every job
// under one of 10,000 keys (so 99 of every 100 wait behind their key).
func BenchmarkDispatchablePage(b *testing.B) {
	const jobs = 1_000_000
	for _, bc := range []struct {
		name string
		key  func(i int) string
	}{
		{"tenth-keyed", func(i int) string {
			if i%10 == 0 {
				return fmt.Sprintf("key-%d", i%1000)
			}
			return ""
		}},
		{"all-keyed", func(i int) string { return fmt.Sprintf("key-%d", i%10_000) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := memstore.New(engine.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			for i := range jobs {
				p := engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: 1, Key: bc.key(i)}
				if _, err := s.JobInsert(b.Context(), p); err != nil {
					b.Fatal(err)
				}
			}
			var after engine.QueuePlace
			for b.Loop() {
				page, err := s.JobListDispatchable(b.Context(), engine.JobDispatchableParams{Status: engine.StatusQueued,
					Type: engine.TypeNoop, After: after, Limit: 100})
				if err != nil {
					b.Fatal(err)
				}
				after = engine.QueuePlace{} // past the end of the queue: start again
				if len(page) == 100 {
					after = engine.PlaceOf(page[len(page)-1])
				}
			}
		})
	}
}

// BenchmarkLightBehindHeavy reads the few light jobs of a queue whose
// front is 100,000 heavier ones, as a round does when a node has a little
// room left: the page reads the light jobs' own run of the load index, so
// it costs the same however many heavy jobs wait ahead.
func BenchmarkLightBehindHeavy(b *testing.B) {
	for _, heavy := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("%d", heavy), func(b *testing.B) {
			s := memstore.New(engine.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			for i := range heavy + 10 {
				load := 4.0
				if i >= heavy {
					load = 1
				}
				p := engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: load}
				if _, err := s.JobInsert(b.Context(), p); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				page, err := s.JobListDispatchable(b.Context(), engine.JobDispatchableParams{Status: engine.StatusQueued,
					Type: engine.TypeNoop, Limit: 11, MaxLoad: engine.Ptr(2.0)})
				if err != nil || len(page) != 10 {
					b.Fatalf("read %d light jobs, %v; want 10", len(page), err)
				}
			}
		})
	}
}

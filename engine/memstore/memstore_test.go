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

// BenchmarkDispatchablePage reads one page of 100 dispatchable jobs from a
// store holding a million queued jobs, a tenth of them under 100 keys, as
// the simulator's dispatcher does every round.
func BenchmarkDispatchablePage(b *testing.B) {
	const jobs = 1_000_000
	s := memstore.New(engine.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	for i := range jobs {
		p := engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: 1}
		if i%10 == 0 {
			p.Key = fmt.Sprintf("key-%d", i%1000)
		}
		if _, err := s.JobInsert(b.Context(), p); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var after int64
	for b.Loop() {
		page, err := s.JobListDispatchable(b.Context(), engine.JobDispatchableParams{Status: engine.StatusQueued, AfterID: after, Limit: 100})
		if err != nil {
			b.Fatal(err)
		}
		if len(page) != 100 {
			after = 0 // wrapped around the end of the queue
			continue
		}
		after = page[len(page)-1].ID
	}
}

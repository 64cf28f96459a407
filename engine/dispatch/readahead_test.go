package dispatch_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/placement"
)

// pageReads is a store that counts the pages of the queues read from it,
// and lets a test wait until so many were.
type pageReads struct {
	engine.Store
	mu     sync.Mutex
	n      int
	gaveUp bool
	more   *sync.Cond
}

func newPageReads(s engine.Store) *pageReads {
	p := &pageReads{Store: s}
	p.more = sync.NewCond(&p.mu)
	return p
}

func (p *pageReads) JobListDispatchable(ctx context.Context, q engine.JobDispatchableParams) ([]*engine.Job, error) {
	jobs, err := p.Store.JobListDispatchable(ctx, q)
	p.mu.Lock()
	p.n++
	p.more.Broadcast()
	p.mu.Unlock()
	return jobs, err
}

// awaitReads waits until n pages were read, or reports false once limit
// has passed: the bound only ends a test that would otherwise hang.
func (p *pageReads) awaitReads(n int, limit time.Duration) bool {
	stop := time.AfterFunc(limit, func() {
		p.mu.Lock()
		p.gaveUp = true
		p.more.Broadcast()
		p.mu.Unlock()
	})
	defer stop.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.gaveUp && p.n < n {
		p.more.Wait()
	}
	return p.n >= n
}

// recordingNodes start every job offered, in the order offered, and can
// hold their answer to the first batch until the test lets it go.
type recordingNodes struct {
	store   engine.Store
	mu      sync.Mutex
	offered map[string][]int64 // per node, in the order started
	room    map[string]int     // nodes named here take that many jobs more, then decline
	gone    map[int64]bool     // jobs answered as moved on, not started
	// hold, if set, is called before the first batch is answered.
	hold    func()
	batches int
}

func (s *recordingNodes) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	s.mu.Lock()
	s.batches++
	first := s.batches == 1
	s.mu.Unlock()
	if first && s.hold != nil {
		s.hold()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engine.OfferResult, len(offers))
	for i, o := range offers {
		if s.gone[o.JobID] {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone, Reason: "job moved on"}
			continue
		}
		if left, limited := s.room[n.Name]; limited {
			if left == 0 {
				out[i] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "busy"}
				continue
			}
			s.room[n.Name] = left - 1
		}
		if _, err := s.store.JobUpdate(ctx, engine.StartOfferUpdate(o, n.Name)); err != nil {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone, Reason: err.Error()}
			continue
		}
		if s.offered == nil {
			s.offered = map[string][]int64{}
		}
		s.offered[n.Name] = append(s.offered[n.Name], o.JobID)
		out[i] = engine.OfferResult{Verdict: engine.OfferAccepted}
	}
	return out
}

// While a slice's offers are out, the round reads the next slice: the
// first offer is not answered until that read has been made, which a
// round reading only after its offers were answered would never do.
func TestARoundReadsTheNextSliceWhileTheLastIsOffered(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "memory"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var s engine.Store = memstore.New(engine.SystemClock{})
			if backend == "sqlite" {
				s = newStore(t)
			}
			addNode(t, s, "a", 100)
			var want []int64
			for range 10 {
				want = append(want, addJob(t, s, engine.TypeSleep, 1).ID)
			}
			reads := newPageReads(s)
			readAhead := true
			nodes := &recordingNodes{store: s, hold: func() {
				// The first slice's page was read; the next one's must be
				// read before this offer is answered.
				readAhead = reads.awaitReads(2, 2*time.Minute)
			}}
			d := dispatch.NewDispatcher(reads, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
			d.SetPageSize(4)
			stats, err := d.Round(context.Background(), always)
			if err != nil {
				t.Fatal(err)
			}
			if !readAhead {
				t.Fatal("the next slice was not read while the first slice's offers were out")
			}
			if stats.Dispatched != 10 || !slices.Equal(nodes.offered["a"], want) {
				t.Fatalf("dispatched %d, started in the order %v; want all 10 in the order %v", stats.Dispatched, nodes.offered["a"], want)
			}
		})
	}
}

// Reading ahead changes nothing a round does: a round that reads each
// slice only after the last one's offers were answered (offers made one
// node after another, as a simulation makes them) places the same jobs on
// the same nodes in the same order, and reads the same rows, also when a
// node declines and the slice read ahead against the books before the
// decline is read again.
func TestReadingAheadPlacesWhatReadingAfterwardsWould(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		room map[string]int
	}{
		{"every offer taken", nil},
		{"a node declines mid-round", map[string]int{"a": 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			type result struct {
				stats   dispatch.RoundStats
				offered map[string][]int64
			}
			run := func(sequential bool) result {
				s := newStore(t)
				addNode(t, s, "a", 100)
				addNode(t, s, "b", 100)
				for i := range 23 {
					p := engine.JobInsertParams{Type: engine.TypeSleep, Load: float64(1 + i%3), Status: engine.StatusQueued, MaxAttempts: 1}
					if i%5 == 0 {
						p.Priority = 70 // ahead of the jobs before it
					}
					if _, err := s.JobInsert(context.Background(), p); err != nil {
						t.Fatal(err)
					}
				}
				room := map[string]int{}
				for n, r := range c.room {
					room[n] = r
				}
				nodes := &recordingNodes{store: s, room: room}
				d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
				d.SetPageSize(4)
				if sequential {
					d.SetSequentialOffers()
				}
				stats, err := d.Round(context.Background(), always)
				if err != nil {
					t.Fatal(err)
				}
				return result{stats, nodes.offered}
			}
			ahead, after := run(false), run(true)
			if ahead.stats.Dispatched != after.stats.Dispatched || ahead.stats.Dispatched == 0 {
				t.Fatalf("dispatched %d reading ahead, %d reading afterwards", ahead.stats.Dispatched, after.stats.Dispatched)
			}
			for _, n := range []string{"a", "b"} {
				if !slices.Equal(ahead.offered[n], after.offered[n]) {
					t.Fatalf("%s started %v reading ahead, %v reading afterwards", n, ahead.offered[n], after.offered[n])
				}
			}
			if c.room == nil && ahead.stats.Read != after.stats.Read {
				t.Fatalf("read %d rows reading ahead, %d reading afterwards", ahead.stats.Read, after.stats.Read)
			}
			if c.room != nil && ahead.stats.Read <= after.stats.Read {
				t.Fatalf("read %d rows reading ahead, %d reading afterwards; want more, the page read ahead before the decline and read again", ahead.stats.Read, after.stats.Read)
			}
		})
	}
}

// A slice read ahead is judged against the books as planned; an offer
// that finds its job gone frees its room, and the next slice is read
// again against the room freed: here the one node is full as planned, so
// the read ahead finds nothing to read, but the second job is gone and the
// two light jobs behind the heavy one fit in its room.
func TestARoundReadsAgainWhenAnOfferFreesRoom(t *testing.T) {
	t.Parallel()
	for _, sequential := range []bool{false, true} {
		s := newStore(t)
		addNode(t, s, "a", 4)
		var ids []int64
		for _, load := range []float64{2, 2, 3, 1, 1} {
			ids = append(ids, addJob(t, s, engine.TypeSleep, load).ID)
		}
		nodes := &recordingNodes{store: s, gone: map[int64]bool{ids[1]: true}}
		d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
		d.SetPageSize(2)
		if sequential {
			d.SetSequentialOffers()
		}
		if _, err := d.Round(context.Background(), always); err != nil {
			t.Fatal(err)
		}
		if want := []int64{ids[0], ids[3], ids[4]}; !slices.Equal(nodes.offered["a"], want) {
			t.Fatalf("sequential offers %v: started %v, want %v", sequential, nodes.offered["a"], want)
		}
	}
}

package dispatch_test

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

func TestRoundStatsCountWaitingJobsByCause(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNodeAs(t, s, "a", 4, func(n *engine.Node) { n.ReservedMemory = 1 << 30 })
	if err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: "a", MemAvailable: 100 << 20, Cores: 2}); err != nil {
		t.Fatal(err)
	}
	addNode(t, s, "b", 4, engine.TypeNoop)
	nodes := &fakeNodes{store: s, answer: func(string, engine.DispatchOffer) engine.OfferResult {
		return engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "busy"}
	}}
	addJob(t, s, engine.TypeSleep, 1) // only a offers sleep: short of memory
	addJob(t, s, engine.TypeNoop, 1)  // b declines
	addJob(t, s, "x", 1)              // nobody offers x
	stats := round(t, newDispatcher(s, nodes))
	want := map[string]int{string(placement.CauseLowMemory): 1, dispatch.WaitDeclined: 1, dispatch.WaitNeverRunnable: 1}
	if !maps.Equal(stats.Waiting, want) {
		t.Errorf("waiting = %v, want %v", stats.Waiting, want)
	}
	const summary = "3 jobs wait: 1 declined, 1 low-memory (node a: free memory 100MiB under reserve 1GiB), 1 never-runnable"
	if got := stats.Summary(); got != summary {
		t.Errorf("summary = %q\n      want %q", got, summary)
	}
}

func TestAFullClusterCountsTheRestOfTheQueueAsWaitingForRoom(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "n", 2)
	for range 5 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	stats := round(t, newDispatcher(s, &fakeNodes{store: s}))
	if stats.Dispatched != 2 || stats.Waiting["busy"] != 3 || stats.Skipped != 3 || stats.Considered != 5 {
		t.Errorf("stats = %+v; want 2 dispatched and 3 counted busy without filtering", stats)
	}
	if got, want := stats.Summary(), "3 jobs wait: busy"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}

// The full-cluster rule never skips a job that filtering would place.
func TestTheFullClusterRuleSkipsNoPlaceableJob(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNode(t, s, "n", 2)
	addNode(t, s, "tiny", 0.5)
	addJob(t, s, engine.TypeSleep, 2) // fills n
	big := addJob(t, s, engine.TypeSleep, 1)
	zero := addJob(t, s, engine.TypeSleep, 0.5) // still fits tiny
	parent := addJob(t, s, engine.TypeSleep, 0) // runs on tiny... or n
	child, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, ParentID: &parent.ID, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	round(t, newDispatcher(s, &fakeNodes{store: s}))
	if j := jobOf(t, s, big.ID); j.Status != engine.StatusQueued {
		t.Errorf("load-1 job = %s on %q; no node had room", j.Status, j.Node)
	}
	if j := jobOf(t, s, zero.ID); j.Status != engine.StatusRunning || j.Node != "tiny" {
		t.Errorf("load-0.5 job = %s on %q; want it on tiny", j.Status, j.Node)
	}
	if j := jobOf(t, s, child.ID); j.Status != engine.StatusRunning {
		t.Errorf("first child = %s; a first child may queue ahead on a full node", j.Status)
	}
}

// records keeps the messages logged at info level or above.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) summaries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		if strings.HasPrefix(m, "dispatch: ") || strings.HasPrefix(m, "no job waits") {
			out = append(out, m)
		}
	}
	return out
}

func TestTheSummaryIsLoggedOncePerMinuteUnlessItChanges(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "n", 1)
	clock := engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	logged := &records{}
	d := dispatch.NewDispatcher(s, dispatch.OfferFunc((&fakeNodes{store: s}).Offer), placement.LoadFactor{}, clock, slog.New(logged))
	first := addJob(t, s, engine.TypeSleep, 1)
	addJob(t, s, engine.TypeSleep, 1)
	round(t, d) // one runs, one waits
	round(t, d) // the same: not logged again
	clock.Advance(59 * time.Second)
	round(t, d)
	if got := logged.summaries(); len(got) != 1 || got[0] != "dispatch: 1 job waits: busy" {
		t.Fatalf("summaries within a minute = %q; want one", got)
	}
	clock.Advance(time.Second)
	round(t, d) // a minute on: said again
	addJob(t, s, engine.TypeSleep, 1)
	round(t, d) // changed: said at once
	finish(t, s, first.ID)
	round(t, d) // one more placed, one still waits: changed again
	want := []string{"dispatch: 1 job waits: busy", "dispatch: 1 job waits: busy", "dispatch: 2 jobs wait: busy", "dispatch: 1 job waits: busy"}
	if got := logged.summaries(); !slices.Equal(got, want) {
		t.Errorf("summaries = %q\n      want %q", got, want)
	}
}

// A cluster whose only node is short of memory is not a full cluster: the
// jobs are counted as held back by the memory reserve, and the summary names
// the node.
func TestANodeShortOfMemoryNeverPassesForAFullCluster(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNodeAs(t, s, "a", 4, func(n *engine.Node) { n.ReservedMemory = 1 << 30 })
	if err := s.NodeTouch(context.Background(), engine.NodeTouchParams{Name: "a", MemAvailable: 512 << 20, Cores: 2}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	stats := round(t, newDispatcher(s, &fakeNodes{store: s}))
	if stats.Dispatched != 0 || stats.Skipped != 0 || stats.Waiting[string(placement.CauseLowMemory)] != 3 {
		t.Errorf("stats = %+v; want all 3 counted low-memory, none skipped", stats)
	}
	const summary = "3 jobs wait: low-memory (node a: free memory 512MiB under reserve 1GiB)"
	if got := stats.Summary(); got != summary {
		t.Errorf("summary = %q\n      want %q", got, summary)
	}
}

// The load-average gate shifts work, it never stops it: a lone node above
// its limit runs the queue as far as its room goes, and in a cluster the
// calm node takes what fits on it before the hot one gets any.
func TestTheLoadAverageGateOnlyShiftsWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hot := func(t *testing.T, s engine.Store, name string) {
		addNodeAs(t, s, name, 2, func(n *engine.Node) { n.MaxLoadAvg = 4 })
		if err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: name, LoadAvg: 16.58, Cores: 2}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		hot(t, s, "lone")
		for range 3 {
			addJob(t, s, engine.TypeSleep, 1)
		}
		stats := round(t, newDispatcher(s, &fakeNodes{store: s}))
		if stats.Dispatched != 2 || stats.Waiting["busy"] != 1 {
			t.Errorf("stats = %+v; want 2 dispatched to the hot node and 1 waiting for room", stats)
		}
	})
	t.Run("beside a calm node", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		hot(t, s, "hot")
		addNode(t, s, "calm", 2)
		var ids []int64
		for range 3 {
			ids = append(ids, addJob(t, s, engine.TypeSleep, 1).ID)
		}
		stats := round(t, newDispatcher(s, &fakeNodes{store: s}))
		if stats.Dispatched != 3 {
			t.Fatalf("stats = %+v; want all 3 dispatched", stats)
		}
		on := map[string]int{}
		for _, id := range ids {
			j, err := s.JobGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			on[j.Node]++
		}
		if on["calm"] != 2 || on["hot"] != 1 {
			t.Errorf("jobs per node %v; want the calm node filled (2) before the hot one got its 1", on)
		}
	})
}

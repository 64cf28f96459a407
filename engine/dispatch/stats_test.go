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
	if _, err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: "a", MemAvailable: 100 << 20, Cores: 2}); err != nil {
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
	// Only the noop job is read: no node could take the others, and their
	// queues are left unread with the cause that holds them back.
	want := map[string]int{dispatch.WaitDeclined: 1}
	if !maps.Equal(stats.Waiting, want) || stats.Read != 1 {
		t.Errorf("waiting = %v after reading %d, want %v after reading 1", stats.Waiting, stats.Read, want)
	}
	if !unreadFor(stats, engine.TypeSleep, string(placement.CauseLowMemory)) || !unreadFor(stats, "x", dispatch.WaitNeverRunnable) {
		t.Errorf("unread = %+v, want sleep low-memory and x never-runnable", stats.Unread)
	}
	const summary = "1 or more jobs wait: declined; queues not read: type sleep (QUEUED) low-memory (node a: free memory 100MiB under reserve 1GiB); " +
		"type x (QUEUED) never-runnable, no ONLINE node offers it"
	if got := stats.Summary(); got != summary {
		t.Errorf("summary = %q\n      want %q", got, summary)
	}
}

func TestAFullClusterLeavesTheRestOfTheQueueUnread(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "n", 2)
	for range 5 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	stats := round(t, newDispatcher(s, &fakeNodes{store: s}))
	// It reads only the two the node has room for; the rest wait unread.
	if stats.Dispatched != 2 || stats.Considered != 2 || !unreadFor(stats, engine.TypeSleep, "busy") {
		t.Errorf("stats = %+v; want 2 read and dispatched and the rest unread", stats)
	}
	want := "jobs wait unread: type sleep (QUEUED) busy, its lightest job needs 1 and the most room on a node is 0"
	if got := stats.Summary(); got != want {
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
	const busy = "dispatch: jobs wait unread: type sleep (QUEUED) busy, its lightest job needs 1 and the most room on a node is 0"
	if got := logged.summaries(); len(got) != 1 || got[0] != busy {
		t.Fatalf("summaries within a minute = %q; want one", got)
	}
	clock.Advance(time.Second)
	round(t, d) // a minute on: said again
	addJob(t, s, "x", 1)
	round(t, d) // changed: said at once
	finish(t, s, first.ID)
	round(t, d) // the other sleep job placed: changed again
	want := []string{busy, busy, busy + "; type x (QUEUED) never-runnable, no ONLINE node offers it",
		"dispatch: jobs wait unread: type x (QUEUED) never-runnable, no ONLINE node offers it"}
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
	if _, err := s.NodeTouch(context.Background(), engine.NodeTouchParams{Name: "a", MemAvailable: 512 << 20, Cores: 2}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	stats := round(t, newDispatcher(s, &fakeNodes{store: s}))
	if stats.Dispatched != 0 || !unreadFor(stats, engine.TypeSleep, string(placement.CauseLowMemory)) {
		t.Errorf("stats = %+v; want the queue held back by the memory reserve", stats)
	}
	const summary = "jobs wait unread: type sleep (QUEUED) low-memory (node a: free memory 512MiB under reserve 1GiB)"
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
		if _, err := s.NodeTouch(ctx, engine.NodeTouchParams{Name: name, LoadAvg: 16.58, Cores: 2}); err != nil {
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
		if stats.Dispatched != 2 || !unreadFor(stats, engine.TypeSleep, "busy") {
			t.Errorf("stats = %+v; want 2 dispatched to the hot node and the rest waiting for room", stats)
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

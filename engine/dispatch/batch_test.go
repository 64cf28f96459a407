package dispatch_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// batchNodes answers each batch as a node with room for only so many more
// jobs would: the first room[node] offers are accepted and started, the
// rest declined busy.
type batchNodes struct {
	store   engine.Store
	mu      sync.Mutex
	room    map[string]int
	batches map[string][]int // batch sizes offered, per node
}

func (b *batchNodes) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batches[n.Name] = append(b.batches[n.Name], len(offers))
	out := make([]engine.OfferResult, len(offers))
	for i, o := range offers {
		if b.room[n.Name] == 0 {
			out[i] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "busy"}
			continue
		}
		if _, err := b.store.JobUpdate(ctx, engine.StartOfferUpdate(o, n.Name)); err != nil {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone, Reason: err.Error()}
			continue
		}
		b.room[n.Name]--
		out[i] = engine.OfferResult{Verdict: engine.OfferAccepted}
	}
	return out
}

func statusCounts(t *testing.T, s engine.Store) map[engine.Status]int {
	t.Helper()
	jobs, err := s.JobList(context.Background(), engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[engine.Status]int{}
	for _, j := range jobs {
		counts[j.Status]++
	}
	return counts
}

func TestABatchANodeTakesInPartPutsTheRestBack(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 100)
	for range 10 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &batchNodes{store: s, room: map[string]int{"a": 4}, batches: map[string][]int{}}
	d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
	stats, err := d.Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Dispatched != 4 || stats.Waiting[dispatch.WaitDeclined] != 6 {
		t.Fatalf("stats = %+v, want 4 dispatched and 6 waiting declined", stats)
	}
	if got := nodes.batches["a"]; len(got) != 1 || got[0] != 10 {
		t.Fatalf("batches offered to a = %v, want one of 10", got)
	}
	if c := statusCounts(t, s); c[engine.StatusRunning] != 4 || c[engine.StatusQueued] != 6 {
		t.Fatalf("statuses = %v, want 4 RUNNING and 6 back to QUEUED", c)
	}
}

func TestJobsOneNodeDeclinesGoToTheNext(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 100)
	addNode(t, s, "b", 100)
	for range 10 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	// a thinks it has room for 2 only; b for everything.
	nodes := &batchNodes{store: s, room: map[string]int{"a": 2, "b": 100}, batches: map[string][]int{}}
	d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
	stats, err := d.Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Dispatched != 10 || stats.Waited() != 0 {
		t.Fatalf("stats = %+v, want all 10 dispatched", stats)
	}
	running, _ := s.JobList(context.Background(), engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}})
	on := map[string]int{}
	for _, j := range running {
		on[j.Node]++
	}
	if on["a"] != 2 || on["b"] != 8 {
		t.Fatalf("running per node = %v, want a 2, b 8", on)
	}
	if len(nodes.batches["a"]) != 1 {
		t.Fatalf("a was offered %v batches; a node that declined gets no more offers in the round", nodes.batches["a"])
	}
}

// The lease holder stops trusting its lease after the round read and
// planned the batch, as when the lease runs out mid-round: no offer goes
// out, and the store is left as it was.
func TestALeaseLapsingMidBatchDispatchesNothingMore(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 100)
	for range 5 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &batchNodes{store: s, room: map[string]int{"a": 100}, batches: map[string][]int{}}
	d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
	before, err := s.JobList(context.Background(), engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	planned := false
	trusted := func() bool { planned = true; return false } // asked once the batch is planned
	stats, err := d.Round(context.Background(), trusted)
	if !errors.Is(err, dispatch.ErrUntrusted) || stats.Dispatched != 0 {
		t.Fatalf("err = %v, dispatched %d; want ErrUntrusted and nothing dispatched", err, stats.Dispatched)
	}
	if len(nodes.batches) != 0 {
		t.Fatalf("offers were made after the lease lapsed: %v", nodes.batches)
	}
	if !planned {
		t.Fatal("the round never asked whether it may dispatch")
	}
	after, err := s.JobList(context.Background(), engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("the jobs changed although nothing was dispatched:\n before %+v\n after  %+v", before, after)
	}
}

func TestARoundStopsReadingTheQueueOnceNoNodeHasRoom(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 3)
	for range 20 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &batchNodes{store: s, room: map[string]int{"a": 100}, batches: map[string][]int{}}
	d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
	d.SetPageSize(5)
	stats, err := d.Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	// The node has room for 3: the round reads 3, not a page of 5.
	if stats.Dispatched != 3 || stats.Considered != 3 || !stats.More {
		t.Fatalf("stats = %+v, want 3 read and dispatched and the rest unread", stats)
	}
	if got := stats.Summary(); got != "jobs wait unread: type sleep (QUEUED) busy, its lightest job needs 1 and the most room on a node is 0" {
		t.Fatalf("summary = %q", got)
	}
}

// localNodes is batchNodes with node "self" in the dispatcher's own
// process: its jobs are started straight from the queue.
type localNodes struct {
	*batchNodes
	locals [][]engine.Status // statuses of each local batch as handed over
}

func (l *localNodes) Local(n *engine.Node) bool { return n.Name == "self" }

func (l *localNodes) StartLocal(ctx context.Context, _ engine.LeaseTerm, jobs []*engine.Job) []engine.OfferResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	var seen []engine.Status
	out := make([]engine.OfferResult, len(jobs))
	for i, j := range jobs {
		seen = append(seen, j.Status)
		if l.room["self"] == 0 {
			out[i] = engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "busy"}
			continue
		}
		if _, err := l.store.JobUpdate(ctx, engine.QueuedStartUpdate(j, "self")); err != nil {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone, Reason: err.Error()}
			continue
		}
		l.room["self"]--
		out[i] = engine.OfferResult{Verdict: engine.OfferAccepted}
	}
	l.locals = append(l.locals, seen)
	return out
}

func TestTheOwnNodeStartsJobsWithoutADispatchingStep(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "self", 100)
	addNode(t, s, "other", 100)
	for range 10 {
		addJob(t, s, engine.TypeSleep, 1)
	}
	nodes := &localNodes{batchNodes: &batchNodes{store: s, room: map[string]int{"self": 3, "other": 4}, batches: map[string][]int{}}}
	d := dispatch.NewDispatcher(s, nodes, placement.LoadFactor{}, engine.SystemClock{}, quietLog())
	stats, err := d.Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Dispatched != 7 {
		t.Fatalf("stats = %+v, want 7 dispatched (3 on self, 4 on other)", stats)
	}
	if len(nodes.locals) == 0 {
		t.Fatal("the own node was never handed jobs")
	}
	for _, st := range nodes.locals[0] {
		if st != engine.StatusQueued {
			t.Fatalf("the own node's first share came as %v; want QUEUED, unclaimed", nodes.locals[0])
		}
	}
	running, _ := s.JobList(context.Background(), engine.JobListParams{Statuses: []engine.Status{engine.StatusRunning}})
	on := map[string]int{}
	for _, j := range running {
		on[j.Node]++
	}
	if on["self"] != 3 || on["other"] != 4 {
		t.Fatalf("running per node = %v, want self 3, other 4", on)
	}
	if c := statusCounts(t, s); c[engine.StatusQueued] != 3 {
		t.Fatalf("statuses = %v, want the 3 no node took left in QUEUED", c)
	}
}

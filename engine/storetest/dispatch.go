package storetest

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var dispatchTests = []subtest{
	{"DispatchablePaging", testDispatchablePaging},
	{"DispatchableRunAfter", testDispatchableRunAfter},
	{"DispatchableKeyBlocking", testDispatchableKeyBlocking},
	{"DispatchableKeyBlockedByLaterActive", testDispatchableKeyBlockedByLaterActive},
	{"DispatchableRefusesOtherStatus", testDispatchableRefusesOtherStatus},
	{"LoadsByNode", testLoadsByNode},
	{"DispatchablePriorityOrder", testDispatchablePriorityOrder},
	{"DispatchableLoadRange", testDispatchableLoadRange},
	{"DispatchableFirstChildren", testDispatchableFirstChildren},
	{"QueueLoads", testQueueLoads},
	{"PriorityStoredAndChanged", testPriorityStoredAndChanged},
}

// dispatchable reads a page of every type's queue of status, merged in
// dispatch order, after the place of job after (nil: from the head).
func dispatchable(t *testing.T, s engine.Store, status engine.Status, after *engine.Job, limit int) []*engine.Job {
	t.Helper()
	return dispatchableAll(t, s, engine.JobDispatchableParams{Status: status, After: placeOf(after), Limit: limit})
}

// dispatchableAll reads page p of every type's queue that JobQueueLoads
// names for p.Status, merged in dispatch order.
func dispatchableAll(t *testing.T, s engine.Store, p engine.JobDispatchableParams) []*engine.Job {
	t.Helper()
	var out []*engine.Job
	for _, q := range queueLoads(t, s) {
		if q.Status == p.Status {
			p.Type = q.Type
			out = append(out, dispatchableRead(t, s, p)...)
		}
	}
	slices.SortFunc(out, func(a, b *engine.Job) int {
		if engine.PlaceOf(a).Before(engine.PlaceOf(b)) {
			return -1
		}
		return 1
	})
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out
}

func queueLoads(t *testing.T, s engine.Store) []engine.QueueLoads {
	t.Helper()
	qs, err := s.JobQueueLoads(t.Context())
	if err != nil {
		t.Fatalf("JobQueueLoads: %v", err)
	}
	return qs
}

func placeOf(j *engine.Job) engine.QueuePlace {
	if j == nil {
		return engine.QueuePlace{}
	}
	return engine.PlaceOf(j)
}

func dispatchableRead(t *testing.T, s engine.Store, p engine.JobDispatchableParams) []*engine.Job {
	t.Helper()
	jobs, err := s.JobListDispatchable(t.Context(), p)
	if err != nil {
		t.Fatalf("JobListDispatchable(%+v): %v", p, err)
	}
	for i, j := range jobs {
		if j.Status != p.Status || j.Type != p.Type || (i > 0 && !engine.PlaceOf(jobs[i-1]).Before(engine.PlaceOf(j))) ||
			(p.After != engine.QueuePlace{} && !p.After.Before(engine.PlaceOf(j))) {
			t.Fatalf("JobListDispatchable(%+v): job %d (%s, %s, priority %d) out of its queue or order", p, j.ID, j.Status, j.Type, j.Priority)
		}
	}
	return jobs
}

// dispatchableBoth reads a page with and without the Long hint, which may
// change how the page is read but never what it holds. Only for tests in
// which no job becomes dispatchable with time between the two reads.
func dispatchableBoth(t *testing.T, s engine.Store, status engine.Status, after *engine.Job, limit int) []*engine.Job {
	t.Helper()
	p := engine.JobDispatchableParams{Status: status, After: placeOf(after), Limit: limit}
	jobs := dispatchableAll(t, s, p)
	p.Long = true
	if long := dispatchableAll(t, s, p); !slices.Equal(ids(jobs), ids(long)) {
		t.Fatalf("JobListDispatchable(%+v): %v, but with the Long hint %v", p, ids(jobs), ids(long))
	}
	return jobs
}

// restart takes a QUEUED job through a run on a node that was lost to
// RESTART, with the engine's own transitions.
func restart(t *testing.T, s engine.Store, j *engine.Job) *engine.Job {
	t.Helper()
	return apply(t, s, engine.RecoverUpdate(start(t, s, j, "n1"), "node n1 was lost"))
}

func testDispatchablePaging(t *testing.T, s engine.Store) {
	q1 := queued(t, s, 1)
	q2 := queued(t, s, 1)
	r1 := restart(t, s, queued(t, s, 1))
	q3 := queued(t, s, 1)
	insert(t, s, engine.JobInsertParams{Status: engine.StatusInstantiated})
	q4 := queued(t, s, 1)
	q5 := queued(t, s, 1)
	start(t, s, queued(t, s, 1), "n1")

	page1 := dispatchableBoth(t, s, engine.StatusQueued, nil, 2)
	wantIDs(t, "QUEUED page 1", page1, q1, q2)
	page2 := dispatchableBoth(t, s, engine.StatusQueued, q2, 2)
	wantIDs(t, "QUEUED page 2", page2, q3, q4)
	page3 := dispatchableBoth(t, s, engine.StatusQueued, q4, 2)
	wantIDs(t, "QUEUED page 3", page3, q5)
	wantIDs(t, "QUEUED past the end", dispatchableBoth(t, s, engine.StatusQueued, q5, 2))
	wantIDs(t, "QUEUED without limit", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), q1, q2, q3, q4, q5)
	wantIDs(t, "RESTART", dispatchableBoth(t, s, engine.StatusRestart, nil, 10), r1)
	if len(page1) > 0 && page1[0].Status != engine.StatusQueued {
		t.Errorf("listed job has status %s", page1[0].Status)
	}
}

func testDispatchableRunAfter(t *testing.T, s engine.Store) {
	now := dbNow(t, s)
	past := insert(t, s, engine.JobInsertParams{RunAfter: engine.Ptr(now.Add(-time.Second))})
	insert(t, s, engine.JobInsertParams{RunAfter: engine.Ptr(now.Add(time.Hour))}) // never listed here
	open := queued(t, s, 1)
	soonAt := now.Add(time.Second)
	soon := insert(t, s, engine.JobInsertParams{RunAfter: &soonAt})
	// A retry's backoff, set relative to the database clock: one still
	// waiting, one whose backoff has passed.
	backoff := func(d time.Duration) *engine.Job {
		u := engine.RecoverUpdate(start(t, s, queued(t, s, 1), "n1"), "node n1 was lost")
		u.RunAfterSeconds = engine.Seconds(d)
		return apply(t, s, u)
	}
	backoff(time.Hour)
	elapsed := backoff(-time.Second)

	// Judged only when the database clock was still short of soonAt after
	// the listing, so a slow machine cannot turn a late listing into a failure.
	if before := dispatchable(t, s, engine.StatusQueued, nil, 0); dbNow(t, s).Before(soonAt) {
		wantIDs(t, "QUEUED before run_after", before, past, open)
	}
	wantIDs(t, "RESTART with backoff", dispatchable(t, s, engine.StatusRestart, nil, 0), elapsed)
	waitDBClockPast(t, s, soonAt)
	wantIDs(t, "QUEUED after run_after", dispatchable(t, s, engine.StatusQueued, nil, 0), past, open, soon)
}

func testDispatchableKeyBlocking(t *testing.T, s engine.Store) {
	a1 := insert(t, s, engine.JobInsertParams{Key: "a"})
	a2 := insert(t, s, engine.JobInsertParams{Key: "a"})
	b1 := insert(t, s, engine.JobInsertParams{Key: "b"})
	free1 := queued(t, s, 1)
	insert(t, s, engine.JobInsertParams{Key: "a"}) // behind a1 and a2 throughout
	free2 := queued(t, s, 1)
	// A held job blocks the later jobs of its key.
	h1 := insert(t, s, engine.JobInsertParams{Key: "h", Status: engine.StatusInstantiated})
	h2 := insert(t, s, engine.JobInsertParams{Key: "h"})
	// A retrying head runs before the next job of its key.
	r1 := restart(t, s, insert(t, s, engine.JobInsertParams{Key: "r"}))
	r2 := insert(t, s, engine.JobInsertParams{Key: "r"})
	// Jobs that ended, however they ended, block nothing.
	for _, end := range []engine.RunOutcome{engine.RunFailed, engine.RunCancelled} {
		finish(t, s, start(t, s, insert(t, s, engine.JobInsertParams{Key: "e"}), "n1"), end)
	}
	e := insert(t, s, engine.JobInsertParams{Key: "e"})

	wantIDs(t, "first of each key", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), a1, b1, free1, free2, e)
	wantIDs(t, "RESTART head of its key", dispatchableBoth(t, s, engine.StatusRestart, nil, 0), r1)

	// The head running still blocks its key.
	a1 = start(t, s, a1, "n1")
	wantIDs(t, "head running", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), b1, free1, free2, e)
	// The head finished: the next of its key, in submission order.
	finish(t, s, a1, engine.RunSucceeded)
	wantIDs(t, "head finished", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), a2, b1, free1, free2, e)
	// Paging skips blocked jobs too.
	wantIDs(t, "page after a2", dispatchableBoth(t, s, engine.StatusQueued, a2, 2), b1, free1)

	admin(t, s, h1, engine.VerbCancel)
	admin(t, s, r1, engine.VerbCancel)
	wantIDs(t, "held and restart heads cancelled", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), a2, b1, free1, free2, h2, r2, e)
}

// A requeued old job of a key waits while a later job of that key is
// active: jobs of one key never run side by side, whatever their order.
func testDispatchableKeyBlockedByLaterActive(t *testing.T, s engine.Store) {
	j1 := start(t, s, insert(t, s, engine.JobInsertParams{Key: "k"}), "n1")
	j1 = finish(t, s, j1, engine.RunSucceeded)
	j2 := start(t, s, insert(t, s, engine.JobInsertParams{Key: "k"}), "n2")
	free := restart(t, s, queued(t, s, 1))
	u, err := engine.RequeueUpdate(j1)
	if err != nil {
		t.Fatal(err)
	}
	if j1, err = s.JobUpdate(t.Context(), u); err != nil {
		t.Fatalf("requeue job %d: %v", u.ID, err)
	}
	restarting := func() []*engine.Job { return dispatchable(t, s, engine.StatusRestart, nil, 0) }

	wantIDs(t, "requeued while a later job of its key runs", restarting(), free)
	// Every way of being active blocks it.
	j2 = admin(t, s, j2, engine.VerbPause)
	wantIDs(t, "later job paused on its node", restarting(), free)
	j2 = admin(t, s, j2, engine.VerbResume)
	j2 = waitChildren(t, s, j2)
	wantIDs(t, "later job waiting for its children", restarting(), free)
	j2 = admin(t, s, j2, engine.VerbCancel)
	wantIDs(t, "later job being cancelled", restarting(), free)
	finish(t, s, j2, engine.RunCancelled)
	wantIDs(t, "later job ended", restarting(), j1, free)

	// A later job of the key still in the queue waits behind the requeued
	// one, which does not wait for it.
	insert(t, s, engine.JobInsertParams{Key: "k"})
	wantIDs(t, "later job queued again", restarting(), j1, free)
	wantIDs(t, "the later queued job waits", dispatchable(t, s, engine.StatusQueued, nil, 0))
}

func testDispatchableRefusesOtherStatus(t *testing.T, s engine.Store) {
	queued(t, s, 1)
	for _, st := range []engine.Status{engine.StatusRunning, engine.StatusInstantiated, ""} {
		if jobs, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: st, Type: engine.TypeNoop}); err == nil {
			t.Errorf("JobListDispatchable(%q) = %d jobs, want an error", st, len(jobs))
		}
	}
	if jobs, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: engine.StatusQueued}); err == nil {
		t.Errorf("JobListDispatchable without a type = %d jobs, want an error", len(jobs))
	}
	if jobs, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: engine.StatusQueued,
		Type: engine.TypeNoop, FirstChildren: true, After: engine.QueuePlace{Priority: 50, ID: 1}}); err == nil {
		t.Errorf("JobListDispatchable of first children past the head = %d jobs, want an error", len(jobs))
	}
}

func testLoadsByNode(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("n1"))
	register(t, s, sampleNode("n2"))
	register(t, s, sampleNode("n3"))
	// Load-holding: RUNNING, CANCELLING, and PAUSED on a node.
	start(t, s, queued(t, s, 1.5), "n1")
	start(t, s, queued(t, s, 2), "n1")
	admin(t, s, start(t, s, queued(t, s, 1), "n2"), engine.VerbCancel)
	admin(t, s, start(t, s, queued(t, s, 4), "n2"), engine.VerbPause)
	// Not load-holding.
	admin(t, s, queued(t, s, 8), engine.VerbPause)
	waitChildren(t, s, start(t, s, queued(t, s, 16), "n1"))
	finish(t, s, start(t, s, queued(t, s, 32), "n1"), engine.RunSucceeded)
	queued(t, s, 64)
	restart(t, s, queued(t, s, 128))

	nodes, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.NodeLoad{}
	for _, n := range nodes {
		got[n.Name] = engine.NodeLoad{Load: n.Load, Running: n.Running}
	}
	want := map[string]engine.NodeLoad{
		"n1": {Load: 3.5, Running: 2},
		"n2": {Load: 5, Running: 2},
		"n3": {},
	}
	if !maps.Equal(got, want) {
		t.Errorf("node loads = %v, want %v", got, want)
	}
}

// A queue is read higher priority first, then oldest first; paging keeps
// that order across priorities; a key keeps its own order whatever its
// jobs' priorities; RESTART is a queue of its own, which the dispatcher
// reads first.
func testDispatchablePriorityOrder(t *testing.T, s engine.Store) {
	low := insert(t, s, engine.JobInsertParams{Priority: 10})
	mid1 := insert(t, s, engine.JobInsertParams{})
	high := insert(t, s, engine.JobInsertParams{Priority: 90})
	mid2 := insert(t, s, engine.JobInsertParams{Priority: engine.DefaultPriority})
	top := insert(t, s, engine.JobInsertParams{Priority: engine.MaxPriority})
	// The urgent job of a key waits behind the key's earlier, humbler job.
	k1 := insert(t, s, engine.JobInsertParams{Key: "k", Priority: 5})
	k2 := insert(t, s, engine.JobInsertParams{Key: "k", Priority: engine.MaxPriority})
	r := restart(t, s, insert(t, s, engine.JobInsertParams{Priority: 1}))
	if mid1.Priority != engine.DefaultPriority || low.Priority != 10 {
		t.Fatalf("stored priorities %d and %d, want %d and 10", mid1.Priority, low.Priority, engine.DefaultPriority)
	}

	wantIDs(t, "queue in dispatch order", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), top, high, mid1, mid2, low, k1)
	wantIDs(t, "page 1", dispatchableBoth(t, s, engine.StatusQueued, nil, 2), top, high)
	wantIDs(t, "page 2", dispatchableBoth(t, s, engine.StatusQueued, high, 2), mid1, mid2)
	wantIDs(t, "page within a priority", dispatchableBoth(t, s, engine.StatusQueued, mid1, 1), mid2)
	wantIDs(t, "page 3", dispatchableBoth(t, s, engine.StatusQueued, mid2, 2), low, k1)
	wantIDs(t, "RESTART", dispatchableBoth(t, s, engine.StatusRestart, nil, 0), r)

	finish(t, s, start(t, s, k1, "n1"), engine.RunSucceeded)
	wantIDs(t, "the key's next job, now its head", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), top, k2, high, mid1, mid2, low)
}

// A page keeps only the jobs whose load is in the range asked for, and
// still pages in dispatch order.
func testDispatchableLoadRange(t *testing.T, s engine.Store) {
	l1 := queued(t, s, 1)
	l3 := queued(t, s, 3)
	l0 := queued(t, s, 0)
	l2 := queued(t, s, 2)
	l4 := queued(t, s, 4)
	read := func(maxLoad, above *float64, after *engine.Job, limit int) []*engine.Job {
		p := engine.JobDispatchableParams{Status: engine.StatusQueued, Type: engine.TypeNoop, MaxLoad: maxLoad,
			LoadAbove: above, After: placeOf(after), Limit: limit}
		got := dispatchableRead(t, s, p)
		p.Long = true
		if long := dispatchableRead(t, s, p); !slices.Equal(ids(got), ids(long)) {
			t.Fatalf("%+v: %v, with the Long hint %v", p, ids(got), ids(long))
		}
		return got
	}
	wantIDs(t, "load at most 2", read(engine.Ptr(2.0), nil, nil, 0), l1, l0, l2)
	wantIDs(t, "load at most 2, after job 1", read(engine.Ptr(2.0), nil, l1, 1), l0)
	wantIDs(t, "load at most 0", read(engine.Ptr(0.0), nil, nil, 0), l0)
	wantIDs(t, "load above 2", read(nil, engine.Ptr(2.0), nil, 0), l3, l4)
	wantIDs(t, "load above 1, at most 3", read(engine.Ptr(3.0), engine.Ptr(1.0), nil, 0), l3, l2)
	wantIDs(t, "no load fits", read(engine.Ptr(-1.0), nil, nil, 0))
}

// With FirstChildren a page keeps the children whose parent has no child
// holding load on a node: those that may queue ahead.
func testDispatchableFirstChildren(t *testing.T, s engine.Store) {
	p1 := start(t, s, queued(t, s, 1), "n1")
	p2 := start(t, s, queued(t, s, 1), "n1")
	c1 := insert(t, s, engine.JobInsertParams{ParentID: &p1.ID})
	c2 := insert(t, s, engine.JobInsertParams{ParentID: &p1.ID})
	d1 := insert(t, s, engine.JobInsertParams{ParentID: &p2.ID})
	d2 := insert(t, s, engine.JobInsertParams{ParentID: &p2.ID, Load: 5})
	root := queued(t, s, 1)
	first := func(above *float64) []*engine.Job {
		return dispatchableRead(t, s, engine.JobDispatchableParams{Status: engine.StatusQueued, Type: engine.TypeNoop,
			FirstChildren: true, LoadAbove: above})
	}
	wantIDs(t, "children of parents none of whose children run", first(nil), c1, c2, d1, d2)
	wantIDs(t, "and too heavy for the room", first(engine.Ptr(1.0)), d2)
	start(t, s, d1, "n2")
	wantIDs(t, "a sibling on a node", first(nil), c1, c2)
	wantIDs(t, "every job of the queue", dispatchableBoth(t, s, engine.StatusQueued, nil, 0), c1, c2, d2, root)
}

// JobQueueLoads names every non-empty queue with its lightest and
// heaviest load and whether it holds children.
func testQueueLoads(t *testing.T, s engine.Store) {
	if qs := queueLoads(t, s); len(qs) != 0 {
		t.Fatalf("queues of an empty store: %+v", qs)
	}
	parent := start(t, s, queued(t, s, 1), "n1")
	queued(t, s, 2)
	queued(t, s, 0.5)
	insert(t, s, engine.JobInsertParams{Type: "b", Load: 3, ParentID: &parent.ID})
	insert(t, s, engine.JobInsertParams{Type: "a", Load: 7, Key: "k"})
	insert(t, s, engine.JobInsertParams{Type: "a", Load: 9, Key: "k"}) // behind its key's head
	restart(t, s, insert(t, s, engine.JobInsertParams{Type: "b", Load: 4}))
	insert(t, s, engine.JobInsertParams{Type: "c", Status: engine.StatusInstantiated})
	finish(t, s, start(t, s, insert(t, s, engine.JobInsertParams{Type: "d"}), "n1"), engine.RunSucceeded)

	got := queueLoads(t, s)
	// A job its key holds back may be counted or not: the figures bound
	// what a page finds. Every other figure is exact.
	for i, q := range got {
		if q.Status == engine.StatusQueued && q.Type == "a" && q.Heaviest == 9 {
			got[i].Heaviest = 7
		}
	}
	want := []engine.QueueLoads{
		{Status: engine.StatusRestart, Type: "b", Lightest: 4, Heaviest: 4},
		{Status: engine.StatusQueued, Type: engine.TypeNoop, Lightest: 0.5, Heaviest: 2},
		{Status: engine.StatusQueued, Type: "a", Lightest: 7, Heaviest: 7},
		{Status: engine.StatusQueued, Type: "b", Lightest: 3, Heaviest: 3, Children: true},
	}
	slices.SortFunc(want, engine.CompareQueues)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JobQueueLoads =\n %+v\nwant\n %+v", got, want)
	}
}

// A job keeps the priority it was created with; JobUpdate changes it
// within the range, and a batch refuses to.
func testPriorityStoredAndChanged(t *testing.T, s engine.Store) {
	j := insert(t, s, engine.JobInsertParams{Priority: 77})
	if got := get(t, s, j.ID); got.Priority != 77 {
		t.Fatalf("stored priority %d, want 77", got.Priority)
	}
	for _, bad := range []int{-1, engine.MaxPriority + 1} {
		if _, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued,
			Priority: bad}); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("insert with priority %d: %v, want ErrInvalid", bad, err)
		}
	}
	ended := finish(t, s, start(t, s, j, "n1"), engine.RunFailed)
	u, err := engine.RequeueUpdate(ended)
	if err != nil {
		t.Fatal(err)
	}
	u.Priority = engine.Ptr(0)
	if _, err := s.JobUpdate(t.Context(), u); !errors.Is(err, engine.ErrInvalidTransition) {
		t.Errorf("requeue with priority 0: %v, want a refused transition", err)
	}
	u.Priority = engine.Ptr(3)
	res, err := s.JobUpdateMany(t.Context(), []engine.JobUpdate{u})
	if err != nil || !errors.Is(res[0].Err, engine.ErrInvalidTransition) {
		t.Errorf("a priority in a batch: %v, %v; want a refused transition", err, res)
	}
	requeued := apply(t, s, u)
	if requeued.Priority != 3 || get(t, s, j.ID).Priority != 3 {
		t.Errorf("requeued with priority %d, stored %d; want 3", requeued.Priority, get(t, s, j.ID).Priority)
	}
	listed, err := s.JobList(t.Context(), engine.JobListParams{PriorityMin: 3, PriorityMax: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "jobs of priority 3 to 3", listed, j)
	counts, err := s.JobCountByStatus(t.Context(), engine.JobListParams{PriorityMin: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 0 {
		t.Errorf("counted jobs of priority 4 and up: %v, want none", counts)
	}
}

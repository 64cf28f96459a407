package storetest

import (
	"maps"
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
}

func dispatchable(t *testing.T, s engine.Store, status engine.Status, afterID int64, limit int) []*engine.Job {
	t.Helper()
	return dispatchableRead(t, s, engine.JobDispatchableParams{Status: status, AfterID: afterID, Limit: limit})
}

func dispatchableRead(t *testing.T, s engine.Store, p engine.JobDispatchableParams) []*engine.Job {
	t.Helper()
	jobs, err := s.JobListDispatchable(t.Context(), p)
	if err != nil {
		t.Fatalf("JobListDispatchable(%s, after %d, limit %d, long %v): %v", p.Status, p.AfterID, p.Limit, p.Long, err)
	}
	return jobs
}

// dispatchableBoth reads a page with and without the Long hint, which may
// change how the page is read but never what it holds. Only for tests in
// which no job becomes dispatchable with time between the two reads.
func dispatchableBoth(t *testing.T, s engine.Store, status engine.Status, afterID int64, limit int) []*engine.Job {
	t.Helper()
	p := engine.JobDispatchableParams{Status: status, AfterID: afterID, Limit: limit}
	jobs := dispatchableRead(t, s, p)
	p.Long = true
	if long := dispatchableRead(t, s, p); !slices.Equal(ids(jobs), ids(long)) {
		t.Fatalf("JobListDispatchable(%s, after %d, limit %d): %v, but with the Long hint %v", status, afterID, limit, ids(jobs), ids(long))
	}
	return jobs
}

// restart takes a QUEUED job through a dispatch no node took to RESTART,
// with the engine's own handshake transitions.
func restart(t *testing.T, s engine.Store, j *engine.Job) *engine.Job {
	t.Helper()
	return apply(t, s, engine.PutBackUpdate(apply(t, s, engine.DispatchUpdate(j, "n1")), engine.StatusRestart))
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

	page1 := dispatchableBoth(t, s, engine.StatusQueued, 0, 2)
	wantIDs(t, "QUEUED page 1", page1, q1, q2)
	page2 := dispatchableBoth(t, s, engine.StatusQueued, q2.ID, 2)
	wantIDs(t, "QUEUED page 2", page2, q3, q4)
	page3 := dispatchableBoth(t, s, engine.StatusQueued, q4.ID, 2)
	wantIDs(t, "QUEUED page 3", page3, q5)
	wantIDs(t, "QUEUED past the end", dispatchableBoth(t, s, engine.StatusQueued, q5.ID, 2))
	wantIDs(t, "QUEUED without limit", dispatchableBoth(t, s, engine.StatusQueued, 0, 0), q1, q2, q3, q4, q5)
	wantIDs(t, "RESTART", dispatchableBoth(t, s, engine.StatusRestart, 0, 10), r1)
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
		u := engine.PutBackUpdate(apply(t, s, engine.DispatchUpdate(queued(t, s, 1), "n1")), engine.StatusRestart)
		u.RunAfterSeconds = engine.Seconds(d)
		return apply(t, s, u)
	}
	backoff(time.Hour)
	elapsed := backoff(-time.Second)

	// Judged only when the database clock was still short of soonAt after
	// the listing, so a slow machine cannot turn a late listing into a failure.
	if before := dispatchable(t, s, engine.StatusQueued, 0, 0); dbNow(t, s).Before(soonAt) {
		wantIDs(t, "QUEUED before run_after", before, past, open)
	}
	wantIDs(t, "RESTART with backoff", dispatchable(t, s, engine.StatusRestart, 0, 0), elapsed)
	waitDBClockPast(t, s, soonAt)
	wantIDs(t, "QUEUED after run_after", dispatchable(t, s, engine.StatusQueued, 0, 0), past, open, soon)
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

	wantIDs(t, "first of each key", dispatchableBoth(t, s, engine.StatusQueued, 0, 0), a1, b1, free1, free2, e)
	wantIDs(t, "RESTART head of its key", dispatchableBoth(t, s, engine.StatusRestart, 0, 0), r1)

	// The head running still blocks its key.
	a1 = start(t, s, a1, "n1")
	wantIDs(t, "head running", dispatchableBoth(t, s, engine.StatusQueued, 0, 0), b1, free1, free2, e)
	// The head finished: the next of its key, in submission order.
	finish(t, s, a1, engine.RunSucceeded)
	wantIDs(t, "head finished", dispatchableBoth(t, s, engine.StatusQueued, 0, 0), a2, b1, free1, free2, e)
	// Paging skips blocked jobs too.
	wantIDs(t, "page after a2", dispatchableBoth(t, s, engine.StatusQueued, a2.ID, 2), b1, free1)

	admin(t, s, h1, engine.VerbCancel)
	admin(t, s, r1, engine.VerbCancel)
	wantIDs(t, "held and restart heads cancelled", dispatchableBoth(t, s, engine.StatusQueued, 0, 0), a2, b1, free1, free2, h2, r2, e)
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
	restarting := func() []*engine.Job { return dispatchable(t, s, engine.StatusRestart, 0, 0) }

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

	// A later job being dispatched blocks it too.
	j3 := apply(t, s, engine.DispatchUpdate(insert(t, s, engine.JobInsertParams{Key: "k"}), "n2"))
	wantIDs(t, "later job dispatching", restarting(), free)
	// Sent back to the queue, the later job waits behind the requeued one,
	// which no longer waits for it.
	apply(t, s, engine.PutBackUpdate(j3, engine.StatusQueued))
	wantIDs(t, "later job queued again", restarting(), j1, free)
	wantIDs(t, "the later queued job waits", dispatchable(t, s, engine.StatusQueued, 0, 0))
}

func testDispatchableRefusesOtherStatus(t *testing.T, s engine.Store) {
	queued(t, s, 1)
	for _, st := range []engine.Status{engine.StatusRunning, engine.StatusInstantiated, ""} {
		if jobs, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: st}); err == nil {
			t.Errorf("JobListDispatchable(%q) = %d jobs, want an error", st, len(jobs))
		}
	}
}

func testLoadsByNode(t *testing.T, s engine.Store) {
	register(t, s, sampleNode("n1"))
	register(t, s, sampleNode("n2"))
	register(t, s, sampleNode("n3"))
	// Load-holding: DISPATCHING, RUNNING, CANCELLING, and PAUSED on a node.
	apply(t, s, engine.DispatchUpdate(queued(t, s, 1.5), "n1"))
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

package dispatch_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// insertJob queues a job of typ, load 1, with priority (0: the default) and
// key.
func insertJob(t *testing.T, s engine.Store, typ string, priority int, key string) *engine.Job {
	t.Helper()
	j, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: typ, Load: 1, Priority: priority, Key: key,
		Status: engine.StatusQueued, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// placedOrder runs rounds on a node with room for one job at a time, each
// placed job ending before the next round, and returns the jobs in the
// order they were placed.
func placedOrder(t *testing.T, s engine.Store, n int) []int64 {
	t.Helper()
	nodes := &fakeNodes{store: s}
	d := newDispatcher(s, nodes)
	var order []int64
	for range n {
		if stats := round(t, d); stats.Dispatched != 1 {
			t.Fatalf("a round placed %d jobs on a node with room for one: %+v", stats.Dispatched, stats)
		}
		got := nodes.recorded()
		id := got[len(got)-1].job
		order = append(order, id)
		finish(t, s, id)
	}
	return order
}

// RESTART first, then the higher priority, then the older job, across job
// types; a key keeps its own order whatever its jobs' priorities.
func TestPriorityOrdersTheQueue(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "memory"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			if backend == "memory" {
				s = memstore.New(engine.SystemClock{})
			}
			addNodeAs(t, s, "one", 1, func(n *engine.Node) {
				n.MaxJobs = 1
				n.Services = []engine.NodeService{{Type: engine.TypeSleep}, {Type: engine.TypeNoop}}
			})
			low := insertJob(t, s, engine.TypeSleep, 10, "")
			old := insertJob(t, s, engine.TypeNoop, 0, "")
			k1 := insertJob(t, s, engine.TypeSleep, 5, "k")
			urgent := insertJob(t, s, engine.TypeNoop, 95, "")
			k2 := insertJob(t, s, engine.TypeSleep, engine.MaxPriority, "k") // behind k1, its key's head
			same := insertJob(t, s, engine.TypeSleep, 0, "")
			// A job that failed and went back to the queue goes first,
			// whatever its priority.
			retry := insertJob(t, s, engine.TypeSleep, 1, "")
			if _, err := s.JobUpdate(context.Background(), engine.RecoverUpdate(
				mustUpdate(t, s, engine.QueuedStartUpdate(retry, "one")), "node one was lost")); err != nil {
				t.Fatal(err)
			}
			want := []int64{retry.ID, urgent.ID, old.ID, same.ID, low.ID, k1.ID, k2.ID}
			if got := placedOrder(t, s, len(want)); !slices.Equal(got, want) {
				t.Errorf("placed %v, want %v", got, want)
			}
		})
	}
}

func mustUpdate(t *testing.T, s engine.Store, u engine.JobUpdate) *engine.Job {
	t.Helper()
	j, err := s.JobUpdate(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// A round reads what it can place, never the queue behind it: on a nearly
// full node, a long queue of jobs too heavy for the room left is not read
// at all, round after round; jobs that fit are read, and a job or so more
// per queue, which tells whether the queue goes on.
func TestARoundReadsWhatFitsNotTheQueue(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "memory"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			if backend == "memory" {
				s = memstore.New(engine.SystemClock{})
			}
			ctx := context.Background()
			addNode(t, s, "n", 10)
			// 7 of its 10 are taken: room for 3.
			if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(addJob(t, s, engine.TypeSleep, 7), "n")); err != nil {
				t.Fatal(err)
			}
			heavy := make([]engine.JobInsertParams, 2000)
			for i := range heavy {
				heavy[i] = engine.JobInsertParams{Type: engine.TypeSleep, Load: 4, Status: engine.StatusQueued}
			}
			if _, err := s.JobInsertMany(ctx, heavy); err != nil {
				t.Fatal(err)
			}
			d := newDispatcher(s, &fakeNodes{store: s})
			for range 3 {
				if stats := round(t, d); stats.Read != 0 || stats.Dispatched != 0 {
					t.Fatalf("a round over jobs too heavy for the room read %d of them (%+v), want none", stats.Read, stats)
				}
			}
			// Jobs that fit come after the heavy ones: they are found and
			// placed, the heavy ones still unread.
			for range 5 {
				addJob(t, s, engine.TypeSleep, 1)
			}
			stats := round(t, d)
			if stats.Dispatched != 3 || stats.Read > 3+1 {
				t.Fatalf("round over 3 fitting jobs among 2005: %+v, want 3 placed and at most 4 read", stats)
			}
			if stats = round(t, d); stats.Read != 0 {
				t.Fatalf("the round after, on a full node, read %d jobs", stats.Read)
			}
		})
	}
}

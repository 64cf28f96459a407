package dispatch_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// A job no node can ever run keeps no node: the small job behind it runs.
func TestANeverRunnableOversizedJobKeepsNoNode(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNodeAs(t, s, "big", 8, func(n *engine.Node) { n.AcceptExceeding = false })
	addNode(t, s, "small", 4)
	d := newDispatcher(s, &fakeNodes{store: s})
	filler := addJob(t, s, engine.TypeSleep, 8) // fills big
	round(t, d)
	if j := jobOf(t, s, filler.ID); j.Node != "big" {
		t.Fatalf("filler on %q, want big", j.Node)
	}
	huge := addJob(t, s, engine.TypeSleep, 10)
	one := addJob(t, s, engine.TypeSleep, 1)
	stats := round(t, d)
	if j := jobOf(t, s, one.ID); j.Status != engine.StatusRunning || j.Node != "small" {
		t.Fatalf("load-1 job = %s on %q; want RUNNING on small", j.Status, j.Node)
	}
	if rs := reservations(t, s); len(rs) != 0 {
		t.Fatalf("reservations %v; a never-runnable job must keep no node", rs)
	}
	if !unreadFor(stats, engine.TypeSleep, dispatch.WaitNeverRunnable) {
		t.Errorf("unread = %+v; want the oversized job's queue told never-runnable", stats.Unread)
	}
	e, err := dispatch.Explain(context.Background(), s, huge.ID, placement.LoadFactor{})
	if err != nil {
		t.Fatal(err)
	}
	if !e.NeverRunnable || !strings.Contains(e.Never, "above every node's max load") || !strings.Contains(e.Hint, "--accept-exceeding") {
		t.Errorf("explain: never runnable %v, %q, hint %q", e.NeverRunnable, e.Never, e.Hint)
	}
}

// A reservation made by one dispatcher holds for the next lease holder.
func TestAReservationOutlivesItsDispatcher(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "big", 4)
	first := newDispatcher(s, &fakeNodes{store: s})
	busy := addJob(t, s, engine.TypeSleep, 1)
	round(t, first)
	huge := addJob(t, s, engine.TypeSleep, 10)
	round(t, first)
	if rs := reservations(t, s); !slices.Equal(rs, []engine.Reservation{{JobID: huge.ID, Node: "big"}}) {
		t.Fatalf("reservations %v; want big kept for job %d", rs, huge.ID)
	}

	// The lease moves to another dispatcher: it keeps big for huge.
	second := newDispatcher(s, &fakeNodes{store: s})
	small := addJob(t, s, engine.TypeSleep, 1)
	stats := round(t, second)
	if j := jobOf(t, s, small.ID); j.Status != engine.StatusQueued {
		t.Fatalf("small job = %s on %q; the new dispatcher gave away a kept node", j.Status, j.Node)
	}
	if !unreadFor(stats, engine.TypeSleep, string(placement.CauseReserved)) {
		t.Errorf("unread = %+v; want the small job's queue waiting for a reserved node", stats.Unread)
	}
	finish(t, s, busy.ID)
	round(t, second)
	if j := jobOf(t, s, huge.ID); j.Status != engine.StatusRunning || j.Node != "big" {
		t.Fatalf("oversized job = %s on %q after big drained; want RUNNING on big", j.Status, j.Node)
	}
	if rs := reservations(t, s); len(rs) != 0 {
		t.Errorf("reservations %v after the job was placed; want none", rs)
	}
}

// A kept job that becomes never runnable, or is cancelled, frees its node.
func TestAReservationLapsesWhenItsJobCanNoLongerUseIt(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNode(t, s, "big", 4)
	d := newDispatcher(s, &fakeNodes{store: s})
	addJob(t, s, engine.TypeSleep, 1) // keeps big busy
	round(t, d)
	addJob(t, s, engine.TypeSleep, 10)
	round(t, d)
	if len(reservations(t, s)) != 1 {
		t.Fatal("the oversized job kept no node")
	}
	// big comes back declining oversized jobs: huge can never run.
	if err := s.NodeSetState(ctx, "big", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	addNodeAs(t, s, "big", 4, func(n *engine.Node) { n.AcceptExceeding = false })
	round(t, d)
	if rs := reservations(t, s); len(rs) != 0 {
		t.Fatalf("reservations %v; a never-runnable job must free its node", rs)
	}
	small := addJob(t, s, engine.TypeSleep, 1)
	round(t, d)
	if j := jobOf(t, s, small.ID); j.Status != engine.StatusRunning {
		t.Errorf("small job = %s; want it running on the freed node", j.Status)
	}
}

// When the kept node goes away, the job keeps another of the largest nodes.
func TestAReservationMovesWhenItsNodeGoesAway(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNode(t, s, "a", 4)
	addNode(t, s, "b", 4)
	d := newDispatcher(s, &fakeNodes{store: s})
	addJob(t, s, engine.TypeSleep, 1) // on a (first by name)
	addJob(t, s, engine.TypeSleep, 2) // on b, the less loaded
	round(t, d)
	huge := addJob(t, s, engine.TypeSleep, 10)
	round(t, d)
	if rs := reservations(t, s); !slices.Equal(rs, []engine.Reservation{{JobID: huge.ID, Node: "a"}}) {
		t.Fatalf("reservations %v; want a, the least loaded, kept for job %d", rs, huge.ID)
	}
	if err := s.NodeSetState(ctx, "a", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	if rs := reservations(t, s); !slices.Equal(rs, []engine.Reservation{{JobID: huge.ID, Node: "b"}}) {
		t.Errorf("reservations %v after a went offline; want b kept for job %d", rs, huge.ID)
	}
}

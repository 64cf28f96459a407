package storetest

import (
	"reflect"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var reservationTests = []subtest{
	{"Reservations", testReservations},
	{"ReservationUnknownJob", testReservationUnknownJob},
}

func reserve(t *testing.T, s engine.Store, job *engine.Job, node string) {
	t.Helper()
	if err := s.ReservationSet(t.Context(), engine.Reservation{JobID: job.ID, Node: node}); err != nil {
		t.Fatalf("ReservationSet(job %d, %s): %v", job.ID, node, err)
	}
}

func wantReservations(t *testing.T, s engine.Store, what string, want ...engine.Reservation) {
	t.Helper()
	got := reservations(t, s)
	if want == nil {
		want = []engine.Reservation{}
	}
	if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
		t.Errorf("%s: reservations %v, want %v", what, got, want)
	}
}

func testReservations(t *testing.T, s engine.Store) {
	j1, j2, j3 := queued(t, s, 1), queued(t, s, 1), queued(t, s, 1)
	wantReservations(t, s, "none yet")

	reserve(t, s, j1, "n1")
	wantReservations(t, s, "set", engine.Reservation{JobID: j1.ID, Node: "n1"})
	reserve(t, s, j1, "n1")
	wantReservations(t, s, "set again", engine.Reservation{JobID: j1.ID, Node: "n1"})

	// A job keeps one node: a new one replaces the old, which is free again.
	reserve(t, s, j1, "n2")
	wantReservations(t, s, "replaced", engine.Reservation{JobID: j1.ID, Node: "n2"})
	reserve(t, s, j2, "n1")

	// A node is kept for one job.
	err := s.ReservationSet(t.Context(), engine.Reservation{JobID: j3.ID, Node: "n2"})
	wantErrIs(t, "reserving a node kept for another job", err, engine.ErrConflict)
	err = s.ReservationSet(t.Context(), engine.Reservation{JobID: j2.ID, Node: "n2"})
	wantErrIs(t, "moving a reservation onto a node kept for another job", err, engine.ErrConflict)
	wantReservations(t, s, "after the conflicts",
		engine.Reservation{JobID: j1.ID, Node: "n2"}, engine.Reservation{JobID: j2.ID, Node: "n1"})

	// Listed by job id, whatever the order they were made in.
	reserve(t, s, j3, "n0")
	wantReservations(t, s, "ordered by job",
		engine.Reservation{JobID: j1.ID, Node: "n2"}, engine.Reservation{JobID: j2.ID, Node: "n1"}, engine.Reservation{JobID: j3.ID, Node: "n0"})

	for _, id := range []int64{j1.ID, j1.ID, 424242} {
		if err := s.ReservationDelete(t.Context(), id); err != nil {
			t.Errorf("ReservationDelete(%d): %v", id, err)
		}
	}
	wantReservations(t, s, "after deleting",
		engine.Reservation{JobID: j2.ID, Node: "n1"}, engine.Reservation{JobID: j3.ID, Node: "n0"})
	// The node j1 had is free for another job.
	reserve(t, s, j3, "n2")
	wantReservations(t, s, "after reusing a freed node",
		engine.Reservation{JobID: j2.ID, Node: "n1"}, engine.Reservation{JobID: j3.ID, Node: "n2"})
}

func testReservationUnknownJob(t *testing.T, s engine.Store) {
	err := s.ReservationSet(t.Context(), engine.Reservation{JobID: 424242, Node: "n1"})
	wantErrIs(t, "reserving a node for an unknown job", err, engine.ErrNotFound)
	wantReservations(t, s, "after the refusal")
}

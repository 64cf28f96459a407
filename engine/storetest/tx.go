package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var txTests = []subtest{
	{"TxCommitKeepsEveryChange", testTxCommit},
	{"TxErrorKeepsNoChange", testTxRollback},
	{"TxStoreErrorKeepsNoChange", testTxStoreErrorRollback},
}

func reservations(t *testing.T, s engine.TxStore) []engine.Reservation {
	t.Helper()
	r, err := s.ReservationList(t.Context())
	if err != nil {
		t.Fatalf("ReservationList: %v", err)
	}
	return r
}

func listAll(t *testing.T, s engine.TxStore) []*engine.Job {
	t.Helper()
	jobs, err := s.JobList(t.Context(), engine.JobListParams{})
	if err != nil {
		t.Fatalf("JobList: %v", err)
	}
	return jobs
}

func testTxCommit(t *testing.T, s engine.Store) {
	parent := queued(t, s, 1)
	var child, dispatched *engine.Job
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		var err error
		if child, err = tx.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, ParentID: &parent.ID}); err != nil {
			return err
		}
		// The transaction reads its own writes.
		if _, err := tx.JobGet(t.Context(), child.ID); err != nil {
			return err
		}
		if dispatched, err = tx.JobUpdate(t.Context(), engine.QueuedStartUpdate(parent, "n1")); err != nil {
			return err
		}
		return tx.ReservationSet(t.Context(), engine.Reservation{JobID: child.ID, Node: "n2"})
	})
	if err != nil {
		t.Fatalf("Tx: %v", err)
	}
	if got := get(t, s, child.ID); !reflect.DeepEqual(got, child) {
		t.Errorf("inserted job after commit:\n got  %+v\n want %+v", got, child)
	}
	if got := get(t, s, parent.ID); !reflect.DeepEqual(got, dispatched) {
		t.Errorf("updated job after commit:\n got  %+v\n want %+v", got, dispatched)
	}
	if got, want := reservations(t, s), []engine.Reservation{{JobID: child.ID, Node: "n2"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("reservations after commit = %v, want %v", got, want)
	}
}

// txBaseline is a store with a job and a reservation, and their state.
func txBaseline(t *testing.T, s engine.Store) (job *engine.Job, jobs []*engine.Job, res []engine.Reservation) {
	t.Helper()
	job = queued(t, s, 1)
	other := queued(t, s, 1)
	if err := s.ReservationSet(t.Context(), engine.Reservation{JobID: other.ID, Node: "kept"}); err != nil {
		t.Fatal(err)
	}
	return job, listAll(t, s), reservations(t, s)
}

func wantUnchanged(t *testing.T, s engine.Store, jobs []*engine.Job, res []engine.Reservation) {
	t.Helper()
	if got := listAll(t, s); !reflect.DeepEqual(got, jobs) {
		t.Errorf("jobs after a failed transaction: %d jobs, want the %d from before, unchanged", len(got), len(jobs))
		for i := range min(len(got), len(jobs)) {
			if !reflect.DeepEqual(got[i], jobs[i]) {
				t.Errorf("  now  %+v\n  was  %+v", got[i], jobs[i])
			}
		}
	}
	if got := reservations(t, s); !reflect.DeepEqual(got, res) {
		t.Errorf("reservations after a failed transaction = %v, want %v", got, res)
	}
}

func testTxRollback(t *testing.T, s engine.Store) {
	job, jobs, res := txBaseline(t, s)
	boom := errors.New("boom")
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		inserted, err := tx.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Key: "k"})
		if err != nil {
			return err
		}
		moved, err := tx.JobUpdate(t.Context(), engine.QueuedStartUpdate(job, "n1"))
		if err != nil {
			return err
		}
		if _, err := tx.JobUpdate(t.Context(), engine.RecoverUpdate(moved, "node n1 was lost")); err != nil {
			return err
		}
		if err := tx.ReservationSet(t.Context(), engine.Reservation{JobID: inserted.ID, Node: "n2"}); err != nil {
			return err
		}
		if err := tx.ReservationDelete(t.Context(), res[0].JobID); err != nil {
			return err
		}
		if err := tx.ReservationSet(t.Context(), engine.Reservation{JobID: job.ID, Node: "kept"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx = %v, want fn's error", err)
	}
	wantUnchanged(t, s, jobs, res)
	// The store works on after the rollback.
	if _, err := s.JobUpdate(t.Context(), engine.QueuedStartUpdate(job, "n1")); err != nil {
		t.Errorf("dispatch after the rollback: %v", err)
	}
}

// A store error inside the transaction, passed on by fn, undoes the
// changes made before it.
func testTxStoreErrorRollback(t *testing.T, s engine.Store) {
	job, jobs, res := txBaseline(t, s)
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		if _, err := tx.JobUpdate(t.Context(), engine.QueuedStartUpdate(job, "n1")); err != nil {
			return err
		}
		// The node is kept for the other job.
		return tx.ReservationSet(t.Context(), engine.Reservation{JobID: job.ID, Node: "kept"})
	})
	wantErrIs(t, "Tx with a conflicting reservation", err, engine.ErrConflict)
	wantUnchanged(t, s, jobs, res)
}

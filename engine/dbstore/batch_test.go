package dbstore

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// The checks JobUpdateMany makes before it sends anything are the same on
// every backend, so SQLite stands for all three here; the conformance
// suite holds the statements themselves to JobUpdate on each.

func TestJobUpdateManyRefusesTwoUpdatesOfOneJob(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	a := insertQueued(t, s)
	b := insertQueued(t, s)
	res, err := s.JobUpdateMany(t.Context(), []engine.JobUpdate{
		engine.QueuedStartUpdate(a, "n1"), engine.QueuedStartUpdate(b, "n1"), engine.QueuedStartUpdate(a, "n2"),
	})
	if err == nil || res != nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("JobUpdateMany with job %d twice = %v, %v; want an error for the call", a.ID, res, err)
	}
	for _, j := range []*engine.Job{a, b} {
		if got, _ := s.JobGet(t.Context(), j.ID); !reflect.DeepEqual(got, j) {
			t.Errorf("a refused call changed job %d:\n now  %+v\n want %+v", j.ID, got, j)
		}
	}
}

// Text PostgreSQL would refuse, and a run_after no backend can hold, fail
// their own update, not the whole batch.
func TestJobUpdateManyRefusesWhatCannotBeStored(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	bad := map[string]engine.JobUpdate{}
	for name, edit := range map[string]func(u *engine.JobUpdate){
		"invalid UTF-8 message": func(u *engine.JobUpdate) { u.Message = engine.Ptr("exit \xff") },
		"NUL in a message":      func(u *engine.JobUpdate) { u.Message = engine.Ptr("a\x00b") },
		"invalid UTF-8 node":    func(u *engine.JobUpdate) { u.Node = engine.Ptr("n\xc3") },
		"run after +Inf":        func(u *engine.JobUpdate) { u.RunAfterSeconds = engine.Ptr(math.Inf(1)) },
		"run after 1e11":        func(u *engine.JobUpdate) { u.RunAfterSeconds = engine.Ptr(1e11) },
	} {
		u := engine.QueuedStartUpdate(insertQueued(t, s), "n1")
		edit(&u)
		bad[name] = u
	}
	good := insertQueued(t, s)
	us := []engine.JobUpdate{engine.QueuedStartUpdate(good, "n1")}
	var names []string
	for name, u := range bad {
		us, names = append(us, u), append(names, name)
	}
	res, err := s.JobUpdateMany(t.Context(), us)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].Job.Status != engine.StatusRunning {
		t.Errorf("the valid update beside them: %+v, %v; want applied", res[0].Job, res[0].Err)
	}
	for i, name := range names {
		var te *engine.TransitionError
		if r := res[i+1]; !errors.As(r.Err, &te) || te.Reason == "" || r.Job != nil {
			t.Errorf("%s: got %v, %v; want a *TransitionError with its reason", name, r.Job, r.Err)
		}
		if got, _ := s.JobGet(t.Context(), us[i+1].ID); got.Status != engine.StatusQueued {
			t.Errorf("%s: the refused update made the job %s", name, got.Status)
		}
	}
}

func insertQueued(t *testing.T, s *Store) *engine.Job {
	t.Helper()
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Bulk inserts refresh the statistics once 10,000 jobs went in, however
// they were split, and again each time the count doubles.
func TestAnalyzeDue(t *testing.T) {
	s := &Store{conn: &conn{}}
	var due []int64
	for i := 1; i <= 100; i++ {
		if s.analyzeDue(1000) {
			due = append(due, int64(i*1000))
		}
	}
	want := []int64{10000, 20000, 40000, 80000}
	if !slices.Equal(due, want) {
		t.Errorf("refreshed after %v jobs; want %v", due, want)
	}
}

package memstore_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

func newStore(t *testing.T) (*memstore.Store, *engine.VirtualClock) {
	t.Helper()
	clock := engine.NewVirtualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600)))
	return memstore.New(clock), clock
}

// Nothing a caller holds points into the store: changing what went in or
// what came out changes no stored job or node.
func TestCopiesInAndOut(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	args := []string{"a", "b"}
	payload := json.RawMessage(`{"x":1}`)
	runAfter := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "exec", Status: engine.StatusQueued, Args: args, Payload: payload, RunAfter: &runAfter})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.JobGet(t.Context(), j.ID)
	args[0], payload[2], runAfter = "changed", 'y', runAfter.Add(time.Hour)
	j.Args[1], j.Payload[3] = "changed", 'z'
	*j.RunAfter = j.RunAfter.Add(time.Hour)
	*j.QueuedAt = j.QueuedAt.Add(time.Hour)
	listed, _ := s.JobList(t.Context(), engine.JobListParams{})
	listed[0].Args[0] = "changed"
	if got, _ := s.JobGet(t.Context(), j.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("stored job changed through a caller's copy:\n got  %+v\n want %+v", got, want)
	}

	n := engine.Node{Name: "n1", Services: []engine.NodeService{{Type: "noop"}}}
	if _, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: n}); err != nil {
		t.Fatal(err)
	}
	n.Services[0].Type = "changed"
	got, _ := s.NodeGet(t.Context(), "n1")
	got.Services[0].Type = "changed too"
	if again, _ := s.NodeGet(t.Context(), "n1"); again.Services[0].Type != "noop" {
		t.Errorf("stored node's services changed through a caller's copy: %+v", again.Services)
	}
}

// The nodes a list copies out share their allocations, yet each is the
// caller's own: changing or appending to one copy's lists changes neither
// the store nor the copy listed beside it.
func TestListedNodesAreOwnCopies(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	for _, name := range []string{"n1", "n2"} {
		n := engine.Node{Name: name, Services: []engine.NodeService{{Type: "noop"}, {Type: "sleep"}}}
		if _, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: n}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.NodeTouch(t.Context(), engine.NodeTouchParams{Name: name, RunningUsage: []engine.LiveUsage{{JobID: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	want, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := s.NodeList(t.Context())
	listed[0].Services = append(listed[0].Services, engine.NodeService{Type: "appended"})
	listed[0].RunningUsage = append(listed[0].RunningUsage, engine.LiveUsage{JobID: 99})
	listed[0].Services[0].Type = "changed"
	listed[0].RunningUsage[0].JobID = 42
	if !reflect.DeepEqual(listed[1], want[1]) {
		t.Errorf("a change to one listed node reached the next:\n got  %+v\n want %+v", listed[1], want[1])
	}
	if again, _ := s.NodeList(t.Context()); !reflect.DeepEqual(again, want) {
		t.Errorf("stored nodes changed through a listed copy:\n got  %+v\n want %+v", again, want)
	}
}

// Times come from the injected clock, in UTC.
func TestTimesFromTheClock(t *testing.T) {
	t.Parallel()
	s, clock := newStore(t)
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().UTC(); !j.CreatedAt.Equal(want) || j.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %s, want the clock's %s in UTC", j.CreatedAt, want)
	}
	clock.Advance(90 * time.Second)
	j, err = s.JobUpdate(t.Context(), engine.QueuedStartUpdate(j, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().UTC(); j.StartedAt == nil || !j.StartedAt.Equal(want) {
		t.Errorf("StartedAt = %v, want %s", j.StartedAt, want)
	}
}

// A panic in a transaction undoes its changes and leaves the store usable;
// a TxStore kept past its transaction refuses work.
func TestTxPanicAndUseAfterEnd(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not come through Tx")
			}
		}()
		_ = s.Tx(t.Context(), func(tx engine.TxStore) error {
			if _, err := tx.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued}); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if jobs, err := s.JobList(t.Context(), engine.JobListParams{}); err != nil || len(jobs) != 0 {
		t.Errorf("after a panicking transaction: %d jobs, %v; want none", len(jobs), err)
	}

	var kept engine.TxStore
	if err := s.Tx(t.Context(), func(tx engine.TxStore) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued}); err == nil {
		t.Error("a TxStore used after its transaction accepted a job")
	}
	if jobs, _ := s.JobList(t.Context(), engine.JobListParams{}); len(jobs) != 0 {
		t.Errorf("after using an ended TxStore: %d jobs", len(jobs))
	}
}

// Transactions are isolated: a reader never sees half of one. Each
// transaction moves a job and its reservation together.
func TestTxIsolatedFromReaders(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range rounds {
			err := s.Tx(t.Context(), func(tx engine.TxStore) error {
				cur, err := tx.JobGet(t.Context(), j.ID)
				if err != nil {
					return err
				}
				u := engine.QueuedStartUpdate(cur, "n1")
				if cur.Status == engine.StatusRunning {
					u = engine.RecoverUpdate(cur, "node n1 was lost")
				}
				if _, err := tx.JobUpdate(t.Context(), u); err != nil {
					return err
				}
				if u.To == engine.StatusRunning {
					return tx.ReservationSet(t.Context(), engine.Reservation{JobID: j.ID, Node: "n1"})
				}
				return tx.ReservationDelete(t.Context(), j.ID)
			})
			if err != nil {
				t.Errorf("round %d: %v", i, err)
				return
			}
		}
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return
		default:
		}
		// Read both in one transaction, so they are of one moment.
		err := s.Tx(t.Context(), func(tx engine.TxStore) error {
			cur, err := tx.JobGet(t.Context(), j.ID)
			if err != nil {
				return err
			}
			res, err := tx.ReservationList(t.Context())
			if err != nil {
				return err
			}
			if (cur.Status == engine.StatusRunning) != (len(res) == 1) {
				return errors.New("saw a job and its reservation out of step")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Listing into a buffer again gives what NodeList gives at that moment:
// the live figures of now and the nodes registered since, in name order.
func TestNodeListIntoListsAfresh(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	register := func(name string) {
		t.Helper()
		n := engine.Node{Name: name, MaxLoad: 8, Services: []engine.NodeService{{Type: "noop"}}}
		if _, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: n}); err != nil {
			t.Fatal(err)
		}
	}
	same := func(step string, b *memstore.NodeBuffer) {
		t.Helper()
		got := s.NodeListInto(b)
		want, err := s.NodeList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: listed into a buffer\n %+v\nwant\n %+v", step, got, want)
		}
	}
	var b memstore.NodeBuffer
	register("n2")
	register("n1")
	same("first list", &b)
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Load: 3, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobUpdate(t.Context(), engine.StartOfferUpdate(engine.OfferOf(j, engine.LeaseTerm{}), "n2")); err != nil {
		t.Fatal(err)
	}
	same("a job started", &b)
	register("n0")
	same("a node registered", &b)
	if err := s.NodeSetState(t.Context(), "n1", engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	gone, err := s.NodeGet(t.Context(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.NodeRemove(t.Context(), engine.NodeRemoveParams{Name: "n1", Process: gone.Process, LastSeen: gone.LastSeen}); err != nil {
		t.Fatal(err)
	}
	register("n3")
	same("a node replaced by another", &b)
}

// A store that shares its jobs hands out the stored job itself, and a job
// handed out stays as it was when returned: a transition stores a new job
// rather than changing the stored one.
func TestSharedJobsStayAsReturned(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	s.ShareJobs()
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Load: 2, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.JobGet(t.Context(), j.ID); got != j {
		t.Errorf("JobGet returned a copy of the shared job")
	}
	inserted := *j
	started, err := s.JobUpdate(t.Context(), engine.StartOfferUpdate(engine.OfferOf(j, engine.LeaseTerm{}), "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*j, inserted) {
		t.Errorf("the job as inserted changed with its start:\n got  %+v\n want %+v", *j, inserted)
	}
	if listed, _ := s.JobList(t.Context(), engine.JobListParams{}); len(listed) != 1 || listed[0] != started {
		t.Errorf("JobList = %v, want the started job itself", listed)
	}
}

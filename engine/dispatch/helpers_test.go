package dispatch_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/dispatch"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newStore is a fresh migrated SQLite store.
func newStore(t *testing.T) engine.Store { return newBenchStore(t) }

func newBenchStore(t testing.TB) engine.Store {
	t.Helper()
	ctx := context.Background()
	s, err := dbstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// fixedClock is a clock tests move by hand.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func addNode(t *testing.T, s engine.Store, name string, maxLoad float64, types ...string) {
	addNodeB(t, s, name, maxLoad, types...)
}

func addNodeB(t testing.TB, s engine.Store, name string, maxLoad float64, types ...string) {
	t.Helper()
	if len(types) == 0 {
		types = []string{engine.TypeSleep}
	}
	var svcs []engine.NodeService
	for _, ty := range types {
		svcs = append(svcs, engine.NodeService{Type: ty})
	}
	_, err := engine.RegisterNode(context.Background(), s, engine.NodeRegisterParams{Node: engine.Node{
		Name: name, URL: "http://" + name, MaxLoad: maxLoad, MaxJobs: 200, Weight: 100,
		AcceptExceeding: true, Candidate: true, Services: svcs, Process: testProcess(),
	}, ProcessGone: gone})
	if err != nil {
		t.Fatal(err)
	}
}

// testPIDs numbers the processes nodes of the tests register as.
var testPIDs atomic.Int64

// testProcess is a new process on the tests' one host; a node registered
// again under a name is a restart after its former process died (gone).
func testProcess() engine.NodeProcess {
	return engine.NodeProcess{Host: "test-host", PID: int(testPIDs.Add(1)), StartTime: 1}
}

func gone(engine.NodeProcess) bool { return true }

func addJob(t *testing.T, s engine.Store, typ string, load float64) *engine.Job {
	t.Helper()
	j, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: typ, Load: load, Status: engine.StatusQueued, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// offer is one recorded offer.
type offer struct {
	node string
	job  int64
}

// fakeNodes answers offers like nodes would: by default each accepts while
// its max load allows and starts the job in the store.
type fakeNodes struct {
	store  engine.Store
	mu     sync.Mutex
	offers []offer
	answer func(node string, o engine.DispatchOffer) engine.OfferResult
}

func (f *fakeNodes) Offer(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult {
	f.mu.Lock()
	f.offers = append(f.offers, offer{n.Name, o.JobID})
	f.mu.Unlock()
	res := engine.OfferResult{Verdict: engine.OfferAccepted}
	if f.answer != nil {
		res = f.answer(n.Name, o)
	}
	if res.Verdict == engine.OfferAccepted {
		_, err := f.store.JobUpdate(ctx, engine.StartOfferUpdate(o, n.Name))
		if err != nil {
			return engine.OfferResult{Verdict: engine.OfferGone, Reason: err.Error()}
		}
	}
	return res
}

func (f *fakeNodes) recorded() []offer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]offer(nil), f.offers...)
}

func always() bool { return true }

func jobOf(t *testing.T, s engine.Store, id int64) *engine.Job {
	t.Helper()
	j, err := s.JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// addNodeAs registers a node built from the defaults of addNode, changed
// by edit.
func addNodeAs(t testing.TB, s engine.Store, name string, maxLoad float64, edit func(*engine.Node)) {
	t.Helper()
	n := engine.Node{
		Name: name, URL: "http://" + name, MaxLoad: maxLoad, MaxJobs: 200, Weight: 100,
		AcceptExceeding: true, Candidate: true, Services: []engine.NodeService{{Type: engine.TypeSleep}},
	}
	if edit != nil {
		edit(&n)
	}
	n.Process = testProcess()
	if _, err := engine.RegisterNode(context.Background(), s, engine.NodeRegisterParams{Node: n, ProcessGone: gone}); err != nil {
		t.Fatal(err)
	}
}

// finish ends a job as its node would.
func finish(t *testing.T, s engine.Store, id int64) {
	t.Helper()
	j := jobOf(t, s, id)
	if _, err := s.JobUpdate(context.Background(), engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, false, nil)); err != nil {
		t.Fatal(err)
	}
}

func reservations(t *testing.T, s engine.Store) []engine.Reservation {
	t.Helper()
	rs, err := s.ReservationList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func round(t *testing.T, d *dispatch.Dispatcher) dispatch.RoundStats {
	t.Helper()
	stats, err := d.Round(context.Background(), always)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

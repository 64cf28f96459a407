package node

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func TestReconcileFollowsCancelPauseResumeAndTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	waitStarted(n) // reconcile judges started runs only
	set := func(to engine.Status) {
		j, _ := s.JobGet(ctx, o.JobID)
		if _, err := s.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}); err != nil {
			t.Fatal(err)
		}
		if err := n.runner.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run := func() *runner.Run {
		n.runner.mu.Lock()
		defer n.runner.mu.Unlock()
		return n.runner.runs[o.JobID].run
	}()
	set(engine.StatusPaused)
	if !run.Paused() {
		t.Fatal("a job paused in the store was not paused")
	}
	set(engine.StatusRunning)
	if run.Paused() {
		t.Fatal("a job resumed in the store stayed paused")
	}
	set(engine.StatusCancelling)
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusCancelled {
		t.Fatalf("cancelled job ended %s", j.Status)
	}

	// A job taken from this node (restarted elsewhere) is stopped and its result dropped.
	o2 := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.runner.Accept(ctx, o2); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	waitStarted(n) // reconcile judges started runs only
	j2, _ := s.JobGet(ctx, o2.JobID)
	if _, err := s.JobUpdate(ctx, engine.JobUpdate{ID: j2.ID, From: j2.Status, Version: j2.Version, To: engine.StatusRestart, Node: engine.Ptr("")}); err != nil {
		t.Fatal(err)
	}
	if err := n.runner.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	n.runner.runsDone.Wait()
	if j, _ := s.JobGet(ctx, o2.JobID); j.Status != engine.StatusRestart {
		t.Fatalf("the node overwrote a job taken from it: %s", j.Status)
	}
}

// wholeListings counts the listings of node n1's jobs read with every
// field.
type wholeListings struct {
	engine.Store
	whole atomic.Int64
}

func (w *wholeListings) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	if p.Node == "n1" && !p.Brief {
		w.whole.Add(1)
	}
	return w.Store.JobList(ctx, p)
}

// An orphan, a job the store says runs here with no run on the node, goes
// back to the queue; a job that runs here stays. The check reads the
// node's jobs whole only once it found an orphan among them.
func TestOrphanedJobsAreRecovered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testStore(t)
	counted := &wholeListings{Store: s}
	n := testNodeOn(t, counted, nil)
	live := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.runner.Accept(ctx, live); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	before := counted.whole.Load()
	if err := n.runner.recoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if read := counted.whole.Load() - before; read != 0 {
		t.Errorf("with no orphan the check read the jobs whole %d times; want 0", read)
	}
	// RUNNING on this node in the store, but no run here: its result was
	// never recorded. Counted from before it is, for the node's own check
	// may come first.
	before = counted.whole.Load()
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	j, _ := s.JobGet(ctx, o.JobID)
	if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(j, "n1")); err != nil {
		t.Fatal(err)
	}
	if err := n.runner.recoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if counted.whole.Load() == before {
		t.Error("with an orphan the check did not read the jobs whole")
	}
	if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusRestart || j.Node != "" {
		t.Errorf("orphan = %s on %q, want RESTART with no node", j.Status, j.Node)
	}
	if j, _ := s.JobGet(ctx, live.JobID); j.Status != engine.StatusRunning {
		t.Errorf("a job that runs here became %s", j.Status)
	}
	stopRuns(n)
}

// endsWhileListed lets a run end while a brief listing of node n1's jobs
// is read: the listing is read first, then end runs, and the listing goes
// back as it was read, the run's job still RUNNING in it.
type endsWhileListed struct {
	wholeListings
	end  atomic.Pointer[func()]
	done chan struct{}
}

func (e *endsWhileListed) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	jobs, err := e.wholeListings.JobList(ctx, p)
	if p.Node == "n1" && p.Brief {
		if end := e.end.Swap(nil); end != nil {
			(*end)()
			close(e.done)
		}
	}
	return jobs, err
}

// A run that ends, its result recorded and its run off the books, while
// the orphan check reads the node's jobs is no orphan: the check does not
// read the jobs whole for it, and the job ends once, FINISHED.
func TestARunEndingDuringTheOrphanCheckIsNoOrphan(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := testStore(t)
	listed := &endsWhileListed{wholeListings: wholeListings{Store: s}, done: make(chan struct{})}
	n := testNodeOn(t, listed, nil)
	o, gate := gatedJob(t, n, s)
	waitStarted(n)
	before := listed.whole.Load()
	end := func() {
		writeFile(t, gate, "")
		waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
		if !waitfor.Within(10*time.Second, func() bool { return !n.runner.books.Holds(o.JobID) }) {
			t.Error("the ended run stayed on the books")
		}
	}
	listed.end.Store(&end)
	if err := n.runner.recoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	<-listed.done
	if read := listed.whole.Load() - before; read != 0 {
		t.Errorf("a run that ended during the check made it read the jobs whole %d times; want 0", read)
	}
	if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusFinished || j.Attempt != 1 {
		t.Errorf("the job is %s at attempt %d, want FINISHED at 1", j.Status, j.Attempt)
	}
}

package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// gatedScript runs until $1/gate exists.
const gatedScript = `while [ ! -e "$1/gate" ]; do sleep 0.05; done`

// waitSetup is a node of max load 1 and max jobs 1 running a parent of
// load 1 (tokenScript, gated by the parent dir), reached by its token.
type waitSetup struct {
	n         *Runtime
	s         engine.Store
	parent    engine.DispatchOffer
	asParent  *endpoint.JobClient
	parentDir string
}

func newWaitSetup(t *testing.T) *waitSetup {
	t.Helper()
	dir := t.TempDir()
	n, s := testNode(t, func(c *Config) { c.MaxLoad, c.MaxJobs = 1, 1 })
	srv := httptest.NewServer(n.Handler())
	t.Cleanup(srv.Close)
	// Runs before srv.Close, which waits for the requests it serves: a wait
	// still open when a test fails ends only with its parent's run.
	t.Cleanup(func() { writeFile(t, filepath.Join(dir, "gate"), "") })
	n.url = srv.URL
	parent := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", tokenScript, "sh", dir},
		Load: 1, MaxAttempts: 1})
	if res := n.runner.Accept(context.Background(), parent); res.Verdict != engine.OfferAccepted {
		t.Fatalf("parent's offer: %+v, want accepted", res)
	}
	token := readToken(t, dir, parent.JobID)
	return &waitSetup{n: n, s: s, parent: parent, asParent: endpoint.NewJobClient(srv.URL, token, parent.JobID), parentDir: dir}
}

// child submits a child of load 1 through the parent's token, gated by a
// dir of its own, and makes the offer of it a dispatcher would.
func (w *waitSetup) child(t *testing.T) (engine.DispatchOffer, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	t.Cleanup(func() { writeFile(t, filepath.Join(dir, "gate"), "") })
	sub, err := w.asParent.SubmitChild(ctx, endpoint.ChildRequest{Type: engine.TypeExec, Args: []string{"sh", "-c", gatedScript, "sh", dir},
		Load: engine.Ptr(1.0)})
	if err != nil {
		t.Fatal(err)
	}
	job, err := w.s.JobGet(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	return engine.OfferOf(job, engine.LeaseTerm{}), dir
}

// books are the node's own figures: load, running and waiting as its
// health answer gives them from its books, and its running and waiting
// gauges.
type books struct {
	load             float64
	running, waiting int
	gRunning         float64
	gWaiting         float64
}

func booksOf(n *Runtime) books {
	h := n.runner.Health()
	return books{load: h.Load, running: h.Running, waiting: h.Waiting,
		gRunning: testutil.ToFloat64(n.metrics.running), gWaiting: testutil.ToFloat64(n.metrics.waiting)}
}

type waitAnswer struct {
	waited endpoint.ChildrenWaited
	err    error
}

func (w *waitSetup) waitAsync(ctx context.Context) <-chan waitAnswer {
	out := make(chan waitAnswer, 1)
	go func() {
		waited, err := w.asParent.WaitChildren(ctx, 0)
		out <- waitAnswer{waited, err}
	}()
	return out
}

func TestAWaitingRunFreesItsLoadUntilItsChildrenEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	child, childDir := w.child(t)
	if res := w.n.runner.Accept(ctx, child); res.Verdict != engine.OfferDeclined {
		t.Fatalf("child offered beside its running parent: %+v, want declined (busy)", res)
	}

	answer := w.waitAsync(ctx)
	waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusWaiting })
	// The store took the move first; the books follow.
	waitfor.Until(t, 30*time.Second, "the books to free the parent's load", func() bool { return booksOf(w.n).waiting == 1 })
	if b := booksOf(w.n); b != (books{load: 0, running: 0, waiting: 1, gRunning: 0, gWaiting: 1}) {
		t.Errorf("books of a node whose only job waits: %+v", b)
	}
	if !w.n.runner.books.Holds(w.parent.JobID) {
		t.Error("the waiting parent is no longer on the books")
	}

	if res := w.n.runner.Accept(ctx, child); res.Verdict != engine.OfferAccepted {
		t.Fatalf("child offered while its parent waits: %+v, want accepted", res)
	}
	if b := booksOf(w.n); b.load != 1 || b.running != 1 || b.waiting != 1 {
		t.Errorf("books with the child running: %+v", b)
	}
	select {
	case a := <-answer:
		t.Fatalf("the wait answered %+v while the child runs", a)
	default:
	}

	writeFile(t, filepath.Join(childDir, "gate"), "")
	a := <-answer
	if a.err != nil || !a.waited.Ended || len(a.waited.Children) != 1 || a.waited.Children[0].Status != engine.StatusFinished {
		t.Fatalf("wait: %+v, %v; want ended with the child FINISHED", a.waited, a.err)
	}
	if j, _ := w.s.JobGet(ctx, w.parent.JobID); j.Status != engine.StatusRunning {
		t.Errorf("the parent is %s once its wait answered, want RUNNING", j.Status)
	}
	waitfor.Until(t, 30*time.Second, "the child to leave the books", func() bool { return !w.n.runner.books.Holds(child.JobID) })
	if b := booksOf(w.n); b != (books{load: 1, running: 1, waiting: 0, gRunning: 1, gWaiting: 0}) {
		t.Errorf("books once the parent runs again: %+v", b)
	}

	writeFile(t, filepath.Join(w.parentDir, "gate"), "")
	if j := waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished {
		t.Errorf("parent ended %s, want FINISHED", j.Status)
	}
}

func TestAWaitWithoutChildrenAnswersAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	before, _ := w.s.JobGet(ctx, w.parent.JobID)
	waited, err := w.asParent.WaitChildren(ctx, 0)
	if err != nil || !waited.Ended || len(waited.Children) != 0 {
		t.Fatalf("wait without children: %+v, %v", waited, err)
	}
	if after, _ := w.s.JobGet(ctx, w.parent.JobID); after.Status != engine.StatusRunning || after.Version != before.Version {
		t.Errorf("the parent is %s, version %d (was %d): a wait without children changed it", after.Status, after.Version, before.Version)
	}
}

func TestAWaitThatTimesOutRunsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	w.child(t) // never offered: it does not end
	// A nanosecond: the wait is over before its first look ends.
	waited, err := w.asParent.WaitChildren(ctx, 1)
	if err != nil || waited.Ended {
		t.Fatalf("wait past its timeout: %+v, %v; want not ended", waited, err)
	}
	if j, _ := w.s.JobGet(ctx, w.parent.JobID); j.Status != engine.StatusRunning {
		t.Errorf("the parent is %s after its wait timed out, want RUNNING", j.Status)
	}
	if b := booksOf(w.n); b != (books{load: 1, running: 1, gRunning: 1}) {
		t.Errorf("books after the wait: %+v", b)
	}
}

func TestCancellingAWaitingParentStopsItAndItsChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	child, _ := w.child(t)
	answer := w.waitAsync(ctx)
	waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusWaiting })
	// The store took the move first; the books follow.
	waitfor.Until(t, 30*time.Second, "the books to free the parent's load", func() bool { return booksOf(w.n).waiting == 1 })
	if res := w.n.runner.Accept(ctx, child); res.Verdict != engine.OfferAccepted {
		t.Fatalf("child offered while its parent waits: %+v, want accepted", res)
	}
	if _, err := engine.ApplyVerb(ctx, w.s, w.parent.JobID, engine.VerbCancel, testActor); err != nil {
		t.Fatal(err)
	}
	// The reconcile loop's work, done here as the test node has no loops.
	parent := waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool {
		if err := w.n.runner.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		return j.Status.Terminal()
	})
	if parent.Status != engine.StatusCancelled {
		t.Errorf("parent ended %s, want CANCELLED", parent.Status)
	}
	if c := waitJob(t, w.s, child.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); c.Status != engine.StatusCancelled {
		t.Errorf("child ended %s, want CANCELLED", c.Status)
	}
	if a := <-answer; apiStatus(a.err) != http.StatusUnauthorized {
		t.Errorf("the cancelled parent's wait answered %+v, %v; want 401, its run has ended", a.waited, a.err)
	}
	waitfor.Until(t, 30*time.Second, "the runs to leave the books", func() bool { return !w.n.runner.books.Holds(w.parent.JobID) && !w.n.runner.books.Holds(child.JobID) })
	if b := booksOf(w.n); b != (books{}) {
		t.Errorf("books after both ended: %+v", b)
	}
}

func TestARunEndingWhileItWaitsIsRecordedFromWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	w.child(t) // never offered: it does not end
	answer := w.waitAsync(ctx)
	waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusWaiting })
	writeFile(t, filepath.Join(w.parentDir, "gate"), "")
	if j := waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished {
		t.Errorf("a parent that exited 0 while waiting ended %s, want FINISHED", j.Status)
	}
	if a := <-answer; apiStatus(a.err) != http.StatusUnauthorized {
		t.Errorf("the wait of a run that ended answered %+v, %v; want 401", a.waited, a.err)
	}
	waitfor.Until(t, 30*time.Second, "the run to leave the books", func() bool { return !w.n.runner.books.Holds(w.parent.JobID) })
	if b := booksOf(w.n); b != (books{}) {
		t.Errorf("books after the run ended: %+v", b)
	}
}

func TestAWaitSentTwiceWaitsUntilTheLastIsOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	w.child(t) // never offered: it does not end
	first, stopFirst := context.WithCancel(ctx)
	answer := w.waitAsync(first)
	waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusWaiting })
	// The same wait again, as after a lost connection, then the first gone.
	second, stopSecond := context.WithCancel(ctx)
	again := w.waitAsync(second)
	waitfor.Until(t, 30*time.Second, "the second wait to begin", func() bool {
		return waitersOf(w.n, w.parent.JobID) == 2
	})
	stopFirst()
	<-answer
	waitfor.Until(t, 30*time.Second, "the first wait to end", func() bool {
		return waitersOf(w.n, w.parent.JobID) == 1
	})
	if j, _ := w.s.JobGet(ctx, w.parent.JobID); j.Status != engine.StatusWaiting {
		t.Errorf("the parent is %s while a wait remains, want WAITING", j.Status)
	}
	stopSecond()
	<-again
	waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusRunning })
	waitfor.Until(t, 30*time.Second, "the books to count the parent again", func() bool { return booksOf(w.n).running == 1 })
}

func TestANodeStoppingWhileItsJobWaitsPutsItBackAndCancelsItsChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWaitSetup(t)
	child, _ := w.child(t) // offered, never accepted: it does not end
	answer := w.waitAsync(ctx)
	waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusWaiting })
	stopRuns(w.n)
	if j := waitJob(t, w.s, w.parent.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusWaiting }); j.Status != engine.StatusRestart {
		t.Errorf("a parent stopped by its node's shutdown while waiting is %s, want RESTART", j.Status)
	}
	if c := waitJob(t, w.s, child.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); c.Status != engine.StatusCancelled {
		t.Errorf("the child of the stopped attempt is %s, want CANCELLED", c.Status)
	}
	<-answer
}

// waitersOf is how many waits for its children the run of job id has.
func waitersOf(n *Runtime, id int64) int {
	n.runner.mu.Lock()
	ar := n.runner.runs[id]
	n.runner.mu.Unlock()
	n.api.mu.Lock()
	defer n.api.mu.Unlock()
	return ar.waiters
}

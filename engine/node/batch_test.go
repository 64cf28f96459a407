package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

func TestABatchLargerThanTheRoomIsAcceptedInPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, func(c *Config) { c.AcceptExceeding = false }) // max load 2
	offers := make([]engine.DispatchOffer, 5)
	for i := range offers {
		offers[i] = offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	}
	got := n.runner.AcceptBatch(ctx, offers)
	if len(got) != len(offers) {
		t.Fatalf("%d verdicts for %d offers", len(got), len(offers))
	}
	for i, res := range got {
		j, err := s.JobGet(ctx, offers[i].JobID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i < 2 && (res.Verdict != engine.OfferAccepted || j.Status != engine.StatusRunning || j.Attempt != 1):
			t.Errorf("offer %d: %+v, job %s attempt %d; want accepted and RUNNING attempt 1", i, res, j.Status, j.Attempt)
		case i >= 2 && (res.Verdict != engine.OfferDeclined || !strings.HasPrefix(res.Reason, "busy") ||
			j.Status != engine.StatusQueued || j.Attempt != 0):
			t.Errorf("offer %d: %+v, job %s attempt %d; want declined busy and left QUEUED", i, res, j.Status, j.Attempt)
		}
	}
	if load, running := n.runner.books.Totals(); load != 2 || running != 2 {
		t.Errorf("books hold load %v in %d jobs, want 2 in 2", load, running)
	}
	stopRuns(n)
}

// A batch the books took is started to its end even when its caller is
// gone meanwhile (a round stopped by shutdown, a dispatcher that hung up):
// a start cut off might commit unseen, leaving jobs RUNNING here with no
// run. Offered under a context already cancelled, the jobs start and end.
func TestABatchTakenStartsWhateverBecomesOfItsCaller(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, func(c *Config) { c.MaxLoad = 10 })
	offers := make([]engine.DispatchOffer, 3)
	for i := range offers {
		offers[i] = offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, MaxAttempts: 1})
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for i, res := range n.runner.AcceptBatch(gone, offers) {
		if res.Verdict != engine.OfferAccepted {
			t.Errorf("offer %d: %+v, want accepted", i, res)
		}
	}
	for _, o := range offers {
		if j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished || j.Attempt != 1 {
			t.Errorf("job %d ended %s after %d attempts, want FINISHED after 1", o.JobID, j.Status, j.Attempt)
		}
	}
}

// Each job of a batch gets its own verdict: one that moved on, one that
// does not exist, one of a type the node does not run and one that can
// never run here do not hold up the others.
func TestABatchAnswersEachJobOnItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, func(c *Config) { c.MaxLoad = 10 })
	first := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 0.5, MaxAttempts: 1})
	stale := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 0.5})
	stale.Version--
	unknown := engine.DispatchOffer{JobID: 999999, Version: 1, Status: engine.StatusQueued, Type: engine.TypeNoop, Load: 0.1}
	foreign := offerFor(t, s, engine.JobInsertParams{Type: "render", Load: 0.1})
	invalid := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`{"duration":"soon"}`), Load: 0.5, MaxAttempts: 3})
	last := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 0.5, MaxAttempts: 1})

	got := n.runner.AcceptBatch(ctx, []engine.DispatchOffer{first, stale, unknown, foreign, invalid, last})
	want := []engine.OfferVerdict{engine.OfferAccepted, engine.OfferGone, engine.OfferUnknownJob, engine.OfferRefused,
		engine.OfferRefused, engine.OfferAccepted}
	for i, res := range got {
		if res.Verdict != want[i] {
			t.Errorf("offer %d: %+v, want %v", i, res, want[i])
		}
	}
	for _, o := range []engine.DispatchOffer{first, last} {
		if j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished || j.Attempt != 1 {
			t.Errorf("job %d ended %s attempt %d, want FINISHED after one attempt", j.ID, j.Status, j.Attempt)
		}
	}
	for _, o := range []engine.DispatchOffer{stale, foreign} {
		if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusQueued || j.Attempt != 0 {
			t.Errorf("job %d not started became %s attempt %d, want left QUEUED to the dispatcher", j.ID, j.Status, j.Attempt)
		}
	}
	// A job whose spec is invalid is seen only once started: it has ended
	// by the answer, for good, whatever attempts it has left.
	j, err := s.JobGet(ctx, invalid.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != engine.StatusFailed || !strings.HasPrefix(j.Message, "refused by node n1: ") || !strings.Contains(got[4].Reason, "soon") {
		t.Errorf("invalid job = %s %q, answered %q; want FAILED as refused, with the reason", j.Status, j.Message, got[4].Reason)
	}
	n.runner.runsDone.Wait()
	if load, running := n.runner.books.Totals(); load != 0 || running != 0 {
		t.Errorf("books hold load %v in %d jobs after every run ended", load, running)
	}
}

// gatedRuns is a builtin whose runs wait for a release (or a stop), and
// which counts how often each job ran.
type gatedRuns struct {
	release chan struct{}
	mu      sync.Mutex
	started map[int64]int
}

func addGatedService(n *Runtime) *gatedRuns {
	g := &gatedRuns{release: make(chan struct{}), started: map[int64]int{}}
	n.runner.handlers["gated"] = handler{builtin: func(ctx context.Context, s runner.Spec, _ *runner.Gate, _ runner.Output) error {
		g.mu.Lock()
		g.started[s.JobID]++
		g.mu.Unlock()
		select {
		case <-g.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	return g
}

func (g *gatedRuns) runs(id int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started[id]
}

// Results recorded together are guarded by the job as its run started: one
// an operator paused meanwhile is decided again and ends; one taken from
// the node is dropped, whether the node noticed (fenced) or not.
func TestACompletionBatchLeavesChangedJobsToTheSinglePath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, func(c *Config) { c.MaxLoad = 10 })
	g := addGatedService(n)
	offers := make([]engine.DispatchOffer, 4)
	for i := range offers {
		offers[i] = offerFor(t, s, engine.JobInsertParams{Type: "gated", Load: 1, MaxAttempts: 1})
	}
	for i, res := range n.runner.AcceptBatch(ctx, offers) {
		if res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer %d: %+v", i, res)
		}
	}
	plain, paused, fenced, recovered := offers[0].JobID, offers[1].JobID, offers[2].JobID, offers[3].JobID
	if _, err := engine.ApplyVerb(ctx, s, paused, engine.VerbPause, testActor); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{fenced, recovered} {
		j, _ := s.JobGet(ctx, id)
		if _, err := s.JobUpdate(ctx, engine.RecoverUpdate(j, "node thought gone")); err != nil {
			t.Fatal(err)
		}
	}
	// The node notices one of the jobs taken from it, and stops its run;
	// the other it learns of only from its result's conflict.
	markFenced(n, fenced)
	close(g.release)
	n.runner.runsDone.Wait()

	for id, want := range map[int64]engine.Status{plain: engine.StatusFinished, paused: engine.StatusFinished,
		fenced: engine.StatusRestart, recovered: engine.StatusRestart} {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != want {
			t.Errorf("job %d = %s %q, want %s", id, j.Status, j.Message, want)
		}
		if want == engine.StatusRestart && j.Message != "node thought gone" {
			t.Errorf("job %d taken from the node was changed by its old run: %q", id, j.Message)
		}
		if r := g.runs(id); r != 1 {
			t.Errorf("job %d ran %d times, want once", id, r)
		}
	}
	if load, running := n.runner.books.Totals(); load != 0 || running != 0 {
		t.Errorf("books hold load %v in %d jobs after every result was recorded or dropped", load, running)
	}
}

// markFenced is what reconcile does to a run whose job was taken away.
func markFenced(n *Runtime, id int64) {
	waitStarted(n)
	n.runner.mu.Lock()
	defer n.runner.mu.Unlock()
	ar := n.runner.runs[id]
	ar.fenced = true
	ar.run.Cancel("job was taken from this node", n.cfg.CancelGrace)
}

// flakyStore fails JobUpdateMany, JobStartMany and JobUpdateManyQuiet while failures
// are left, as a database that went away for a moment.
type flakyStore struct {
	engine.Store
	mu       sync.Mutex
	failures int
}

func (f *flakyStore) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	if f.failing() {
		return nil, errors.New("database went away")
	}
	return f.Store.JobUpdateMany(ctx, us)
}

func (f *flakyStore) JobStartMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	if f.failing() {
		return nil, errors.New("database went away")
	}
	return f.Store.JobStartMany(ctx, us)
}

func (f *flakyStore) JobUpdateManyQuiet(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	if f.failing() {
		return nil, errors.New("database went away")
	}
	return f.Store.JobUpdateManyQuiet(ctx, us)
}

// failing uses up one failure, if any is left.
func (f *flakyStore) failing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failures > 0 {
		f.failures--
		return true
	}
	return false
}

func (f *flakyStore) fail(times int) {
	f.mu.Lock()
	f.failures = times
	f.mu.Unlock()
}

func TestResultsAreRetriedWhileTheDatabaseIsAway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, real := testNode(t, nil)
	s := &flakyStore{Store: real}
	n := testNodeOn(t, s, nil)
	g := addGatedService(n)
	offers := []engine.DispatchOffer{
		offerFor(t, s, engine.JobInsertParams{Type: "gated", Load: 1, MaxAttempts: 1}),
		offerFor(t, s, engine.JobInsertParams{Type: "gated", Load: 1, MaxAttempts: 1}),
	}
	for i, res := range n.runner.AcceptBatch(ctx, offers) {
		if res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer %d: %+v", i, res)
		}
	}
	s.fail(2)
	close(g.release)
	n.runner.runsDone.Wait()
	for _, o := range offers {
		if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusFinished {
			t.Errorf("job %d = %s after the database came back, want FINISHED", j.ID, j.Status)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures != 0 {
		t.Errorf("%d failures never reached: the results were not written through the batch", s.failures)
	}
}

// A start the database does not take leaves every job of the batch to the
// dispatcher and nothing on the books.
func TestAStartTheDatabaseRefusesDeclinesTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, real := testNode(t, nil)
	s := &flakyStore{Store: real}
	n := testNodeOn(t, s, nil)
	offers := []engine.DispatchOffer{
		offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1}),
		offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1}),
	}
	s.fail(1)
	for i, res := range n.runner.AcceptBatch(ctx, offers) {
		if res.Verdict != engine.OfferDeclined || !strings.HasPrefix(res.Reason, "not-ready: ") {
			t.Errorf("offer %d: %+v, want declined not-ready", i, res)
		}
	}
	if load, running := n.runner.books.Totals(); load != 0 || running != 0 {
		t.Errorf("books hold load %v in %d jobs after a failed start", load, running)
	}
	for i, res := range n.runner.AcceptBatch(ctx, offers) {
		if res.Verdict != engine.OfferAccepted {
			t.Errorf("offer %d once the database is back: %+v, want accepted", i, res)
		}
	}
}

// A burst of jobs that succeed leaves no line per job in the node's log at
// the default level; a failure still says how the job ended.
func TestOnlyUnusualEndsAreLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testStore(t)
	var logs logBuffer
	n := testNodeLogging(t, s, &logs, nil)
	ok := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, MaxAttempts: 1})
	failing := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", "exit 3"}, Load: 1, MaxAttempts: 1})
	for i, res := range n.runner.AcceptBatch(ctx, []engine.DispatchOffer{ok, failing}) {
		if res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer %d: %+v", i, res)
		}
	}
	n.runner.runsDone.Wait()
	got := logs.String()
	if strings.Count(got, "job ended") != 1 || !strings.Contains(got, fmt.Sprintf("job=%d attempt=1 status=FAILED", failing.JobID)) {
		t.Errorf("log:\n%s\nwant one line, for the failed job", got)
	}
	if strings.Contains(got, "job started") {
		t.Errorf("log:\n%s\nwant no line per started job", got)
	}
}

// A job offered straight from the queue to two nodes at once (a dispatcher
// retrying after a lost answer, or two across a failover) runs on one of
// them: each node's start is guarded by the status and version offered,
// and only the first to write it wins.
func TestAQueuedJobOfferedToTwoNodesStartsOnOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n1, s := testNode(t, nil)
	n2 := testNodeOn(t, s, func(c *Config) { c.Name = "n2" })
	for range 20 {
		job, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Status: engine.StatusQueued, Load: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		offer := engine.OfferOf(job, engine.LeaseTerm{})
		var wg sync.WaitGroup
		var r1, r2 engine.OfferResult
		wg.Go(func() { r1 = n1.runner.Accept(ctx, offer) })
		wg.Go(func() { r2 = n2.runner.Accept(ctx, offer) })
		wg.Wait()
		accepted := 0
		for _, r := range []engine.OfferResult{r1, r2} {
			switch r.Verdict {
			case engine.OfferAccepted:
				accepted++
			case engine.OfferGone:
			default:
				t.Errorf("job %d: verdict %+v, want accepted on one node and gone on the other", job.ID, r)
			}
		}
		j, err := s.JobGet(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if accepted != 1 || j.Status != engine.StatusRunning || j.Attempt != 1 || (j.Node != "n1" && j.Node != "n2") {
			t.Fatalf("job %d: %d accepted (%v, %v); stored %s attempt %d on %q, want one start", job.ID, accepted, r1, r2, j.Status, j.Attempt, j.Node)
		}
		winner := map[string]*Runtime{"n1": n1, "n2": n2}[j.Node]
		loser := map[string]*Runtime{"n1": n2, "n2": n1}[j.Node]
		if _, running := loser.runner.books.Totals(); running != 0 {
			t.Fatalf("job %d: node %s lost the race but holds %d runs", job.ID, loser.cfg.Name, running)
		}
		stopRuns(winner)
		waitJob(t, s, job.ID, func(j *engine.Job) bool { return j.Status != engine.StatusRunning })
		winner.runner.runsDone.Wait()
	}
}

// testActor is the operator of the tests' admin verbs and submits.
var testActor = engine.Actor{Who: "tester@testhost"}

// A large batch is started as two store calls at once, half the jobs each,
// and every job of it runs once. The store holds each start call until the
// other has come too: one call, or two one after the other, never get
// there.
func TestALargeBatchStartsInTwoHalvesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, real := testNode(t, nil)
	s := &startPairStore{Store: real, both: make(chan struct{})}
	n := testNodeOn(t, s, func(c *Config) { c.MaxLoad, c.MaxJobs = 1000, 1000 })
	const jobs = startHalvesMin + 1
	ps := make([]engine.JobInsertParams, jobs)
	for i := range ps {
		ps[i] = engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, MaxAttempts: 1, Status: engine.StatusQueued}
	}
	ids, err := s.JobInsertMany(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	offers := make([]engine.DispatchOffer, jobs)
	for i, id := range ids {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		offers[i] = engine.OfferOf(j, engine.LeaseTerm{})
	}
	for i, res := range n.runner.AcceptBatch(ctx, offers) {
		if res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer %d: %+v, want accepted", i, res)
		}
	}
	if got := s.sizes(); !slices.Equal(got, []int{jobs / 2, jobs - jobs/2}) {
		t.Errorf("start calls of %v jobs, want two at once of %d and %d", got, jobs/2, jobs-jobs/2)
	}
	for _, id := range ids {
		if j := waitJob(t, s, id, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished || j.Attempt != 1 {
			t.Errorf("job %d ended %s after %d attempts, want FINISHED after 1", id, j.Status, j.Attempt)
		}
	}
}

// startPairStore holds each call that starts jobs until a second such call
// has come, and notes the size of each that came while the other did.
type startPairStore struct {
	engine.Store
	mu     sync.Mutex
	calls  int
	paired []int
	both   chan struct{} // closed when the second start call comes
}

func (s *startPairStore) JobStartMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	s.mu.Lock()
	s.calls++
	if s.calls == 2 {
		close(s.both)
	}
	s.mu.Unlock()
	select {
	case <-s.both:
		s.mu.Lock()
		s.paired = append(s.paired, len(us))
		s.mu.Unlock()
	case <-time.After(10 * time.Second): // alone: not noted
	}
	return s.Store.JobStartMany(ctx, us)
}

func (s *startPairStore) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.paired))
}

package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/waitfor"
	"github.com/jobctl/jobctl/engine/watchdog"
)

func TestOfferOverHTTPStartsTheJobAndRecordsItsEnd(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	client := endpoint.NewClient("secret-token", 5*time.Second, nil)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", "echo out; echo err >&2; exit 7"}, Load: 1, MaxAttempts: 1})
	if res := client.Offer(context.Background(), &engine.Node{URL: srv.URL}, o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusFailed || j.ExitCode == nil || *j.ExitCode != 7 || j.Attempt != 1 || j.Node != "n1" {
		t.Fatalf("job = %s exit %v attempt %d node %q, want FAILED exit 7 attempt 1 on n1", j.Status, j.ExitCode, j.Attempt, j.Node)
	}
	chunks, err := s.JobLogList(context.Background(), engine.JobLogListParams{JobID: o.JobID})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for _, c := range chunks {
		log.Write(c.Data)
	}
	if !strings.Contains(log.String(), "out") || !strings.Contains(log.String(), "err") {
		t.Fatalf("log = %q, want stdout and stderr", log.String())
	}
}

func TestOfferVerdicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, func(c *Config) { c.Exec = false; c.AcceptExceeding = false })
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	remote := endpoint.NewClient("secret-token", 5*time.Second, nil)
	offer := func(o engine.DispatchOffer) (inProcess, overHTTP engine.OfferResult) {
		return n.runner.Accept(ctx, o), remote.Offer(ctx, &engine.Node{URL: srv.URL}, o)
	}

	exec := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"true"}, Load: 1})
	if a, b := offer(exec); a.Verdict != engine.OfferRefused || b.Verdict != engine.OfferRefused {
		t.Errorf("exec without --exec: %v / %v, want refused (412)", a, b)
	}
	badSleep := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`{"duration":"soon"}`), Load: 1})
	if a := n.runner.Accept(ctx, badSleep); a.Verdict != engine.OfferRefused {
		t.Errorf("sleep with an invalid payload: %v, want refused", a)
	}
	huge := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 3})
	if a, b := offer(huge); a.Verdict != engine.OfferDeclined || b.Verdict != engine.OfferDeclined {
		t.Errorf("oversized job without --accept-exceeding: %v / %v, want declined", a, b)
	}
	unknown := engine.DispatchOffer{JobID: 999999, Version: 1, Status: engine.StatusQueued, Type: engine.TypeNoop, Load: 1}
	if a, b := offer(unknown); a.Verdict != engine.OfferUnknownJob || b.Verdict != engine.OfferUnknownJob {
		t.Errorf("unknown job: %v / %v, want unknown (404)", a, b)
	}
	stale := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	stale.Version--
	if a, b := offer(stale); a.Verdict != engine.OfferGone || b.Verdict != engine.OfferGone {
		t.Errorf("offer of an older version: %v / %v, want gone (409)", a, b)
	}
	if j, _ := s.JobGet(ctx, stale.JobID); j.Status != engine.StatusQueued || j.Attempt != 0 {
		t.Errorf("a refused stale offer changed the job: %s attempt %d", j.Status, j.Attempt)
	}

	// Two sleeps of load 1 fill max load 2; the third is declined as busy.
	for i := range 3 {
		o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"30s"`), Load: 1})
		res := n.runner.Accept(ctx, o)
		want := engine.OfferAccepted
		if i == 2 {
			want = engine.OfferDeclined
		}
		if res.Verdict != want {
			t.Fatalf("sleep %d: %v, want %v", i, res, want)
		}
	}
	stopRuns(n)
}

func TestAJobIsNeverRunTwiceOnOneNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	// The job is taken away and offered to this node again while its first
	// run has not ended yet (say, within its cancel grace).
	j, _ := s.JobGet(ctx, o.JobID)
	j, err := s.JobUpdate(ctx, engine.RecoverUpdate(j, "test"))
	if err != nil {
		t.Fatal(err)
	}
	again := engine.OfferOf(j, engine.LeaseTerm{})
	if res := n.runner.Accept(ctx, again); res.Verdict != engine.OfferDeclined {
		t.Fatalf("second offer while the first run lives: %v, want declined", res)
	}
	if load, running := n.runner.books.Totals(); running != 1 || load != 1 {
		t.Errorf("books after the refused offer: %d runs, load %v; want 1 and 1", running, load)
	}
	if err := n.runner.reconcile(ctx); err != nil { // stops the run taken away
		t.Fatal(err)
	}
	n.runner.runsDone.Wait()
	if res := n.runner.Accept(ctx, again); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer after the first run ended: %v, want accepted", res)
	}
	j = waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusRunning })
	if j.Attempt != 2 {
		t.Fatalf("attempt %d, want 2", j.Attempt)
	}
	stopRuns(n)
}

func TestANodeInMaintenanceDeclinesOffers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	n.runner.books.SetMaintenance(true) // as the touch loop mirrors it from the store
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferDeclined {
		t.Fatalf("offer to a node in maintenance: %v, want declined", res)
	}
	if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusQueued || j.Attempt != 0 {
		t.Errorf("a declined offer changed the job: %s attempt %d", j.Status, j.Attempt)
	}
}

func TestAcceptanceKeepsTheBooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil) // max load 2

	// Offers made at once cannot together overcommit the node.
	offers := make([]engine.DispatchOffer, 6)
	for i := range offers {
		offers[i] = offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	}
	results := make(chan engine.OfferResult, len(offers))
	for _, o := range offers {
		go func() { results <- n.runner.Accept(ctx, o) }()
	}
	accepted := 0
	for range offers {
		r := <-results
		switch {
		case r.Verdict == engine.OfferAccepted:
			accepted++
		case r.Verdict != engine.OfferDeclined || !strings.HasPrefix(r.Reason, "busy"):
			t.Errorf("concurrent offer: %+v, want accepted or declined busy", r)
		}
	}
	if load, running := n.runner.books.Totals(); accepted != 2 || load != 2 || running != 2 {
		t.Fatalf("%d accepted, books load %v with %d jobs; want 2, 2 and 2", accepted, load, running)
	}
	if h := n.runner.Health(); !h.Accepting || h.Load != 2 || h.Running != 2 || h.Node != "n1" {
		t.Errorf("health = %+v", h)
	}

	// A node that stopped taking work declines, and leaves the job alone.
	n.runner.books.SetReady(false)
	late := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 0})
	if r := n.runner.Accept(ctx, late); r.Verdict != engine.OfferDeclined || r.Reason != "not-ready" {
		t.Errorf("offer to a node not taking work: %+v, want declined not-ready", r)
	}
	if n.runner.Accepting() {
		t.Error("the node says it accepts work after SetReady(false)")
	}
	if j, _ := s.JobGet(ctx, late.JobID); j.Status != engine.StatusQueued || j.Attempt != 0 {
		t.Errorf("a declined offer changed the job: %s attempt %d", j.Status, j.Attempt)
	}

	// Every accepted run is counted until its result is recorded, which is
	// what a shutdown waits for; then the books are empty again.
	stopRuns(n)
	n.runner.runsDone.Wait()
	if load, running := n.runner.books.Totals(); load != 0 || running != 0 {
		t.Errorf("books after the runs ended: load %v with %d jobs, want empty", load, running)
	}
	for _, o := range offers {
		if j, _ := s.JobGet(ctx, o.JobID); j.Status == engine.StatusRunning {
			t.Errorf("job %d still RUNNING after its run was counted out", j.ID)
		}
	}
}

// slowStartFence holds every process start at the watchdog, as a busy
// machine holds a fork, until released.
type slowStartFence struct {
	runFence
	reached chan struct{}
	release chan struct{}
}

func (f *slowStartFence) watchdog() *watchdog.Client {
	select {
	case f.reached <- struct{}{}:
	default:
	}
	<-f.release
	return f.runFence.watchdog()
}

func TestAnAcceptedJobIsAnsweredBeforeItsProcessStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	fence := &slowStartFence{runFence: n.runner.fence, reached: make(chan struct{}, 1), release: make(chan struct{})}
	n.runner.fence = fence
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"true"}, Load: 1, MaxAttempts: 1})

	// A dispatcher's round waits for the verdicts: were it to wait for the
	// fork too, the room freed meanwhile would wait for its next round.
	answered := make(chan engine.OfferResult, 1)
	go func() { answered <- n.runner.Accept(ctx, o) }()
	<-fence.reached
	var res engine.OfferResult
	if !waitfor.Within(10*time.Second, func() bool {
		select {
		case res = <-answered:
			return true
		default:
			return false
		}
	}) {
		close(fence.release)
		t.Fatal("the offer is answered only once the job's process has started")
	}
	if res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusRunning || j.Node != "n1" {
		t.Errorf("job answered as accepted is %s on %q, want RUNNING on n1", j.Status, j.Node)
	}
	close(fence.release)
	if j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished {
		t.Errorf("job ended %s, want FINISHED", j.Status)
	}
}

func TestAJobCallingBeforeItsStartIsRecordedIsAnsweredOnceItIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	fence := &slowStartFence{runFence: n.runner.fence, reached: make(chan struct{}, 1), release: make(chan struct{})}
	n.runner.fence = fence
	released := sync.OnceFunc(func() { close(fence.release) })
	t.Cleanup(released)
	arrived := make(chan struct{}, 1)
	h := n.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	n.url = srv.URL
	dir := t.TempDir()
	t.Cleanup(func() { writeFile(t, filepath.Join(dir, "gate"), "") })
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", tokenScript, "sh", dir}, Load: 1, MaxAttempts: 1})
	if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	// The process runs and has its token; the node's start has not
	// recorded it yet (held at the watchdog).
	<-fence.reached
	token := readToken(t, dir, o.JobID)
	answered := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/jobs/"+strconv.FormatInt(o.JobID, 10)+"/progress", strings.NewReader(`{"percent":42}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-arrived
	// Room for a request that does not wait to be answered before the start
	// is recorded; one that waits is answered only after.
	select {
	case code := <-answered:
		t.Fatalf("progress before the start was recorded: HTTP %d, want an answer once it is", code)
	case <-time.After(200 * time.Millisecond):
	}
	released()
	if code := <-answered; code != http.StatusNoContent {
		t.Fatalf("progress of a job whose start was recorded meanwhile: HTTP %d, want 204", code)
	}
	waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Progress == 42 })
}

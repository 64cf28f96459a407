package node

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/placement"
	"github.com/jobctl/jobctl/engine/runner"
)

// testNode is a node accepting work on a fresh SQLite store, without its
// background loops, so tests drive the handshake directly.
func testNode(t *testing.T, mutate func(*Config)) (*Node, engine.Store) {
	t.Helper()
	ctx := context.Background()
	s, err := dbstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "node.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	cfg.Name, cfg.MaxLoad, cfg.Exec = "n1", 2, true
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := New(cfg, s, engine.SystemClock{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	n.token, n.accepting = "secret-token", true
	t.Cleanup(func() { n.runsDone.Wait() })
	return n, s
}

// offerFor inserts a job and marks it DISPATCHING to node n1, as the
// dispatcher does before it offers.
func offerFor(t *testing.T, s engine.Store, p engine.JobInsertParams) engine.DispatchOffer {
	t.Helper()
	ctx := context.Background()
	p.Status = engine.StatusQueued
	job, err := s.JobInsert(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	job, err = s.JobUpdate(ctx, engine.JobUpdate{ID: job.ID, From: job.Status, Version: job.Version,
		To: engine.StatusDispatching, Node: engine.Ptr("n1")})
	if err != nil {
		t.Fatal(err)
	}
	return engine.DispatchOffer{JobID: job.ID, Attempt: job.Attempt, Version: job.Version, Type: job.Type, Load: job.Load}
}

func waitJob(t *testing.T, s engine.Store, id int64, done func(*engine.Job) bool) *engine.Job {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, err := s.JobGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d stuck in %s", id, j.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEndpointAuthenticatesDispatchRequests(t *testing.T) {
	t.Parallel()
	n, _ := testNode(t, nil)
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	body := `{"job_id":1,"attempt":0,"version":1,"type":"noop","load":1}`
	for _, auth := range []string{"", "Bearer wrong", "secret-token", "Basic secret-token"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/dispatch", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST with Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodHead, srv.URL+"/v1/dispatch", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("HEAD without token answered %v %v, want 401", resp, err)
	}
	if err := NewClient("secret-token", time.Second, nil).Heartbeat(context.Background(), &engine.Node{URL: srv.URL}); err != nil {
		t.Errorf("heartbeat with the token: %v", err)
	}
	if err := NewClient("wrong", time.Second, nil).Heartbeat(context.Background(), &engine.Node{URL: srv.URL}); err == nil {
		t.Error("heartbeat with a wrong token succeeded")
	}
	for _, open := range []string{"/healthz", "/metrics"} {
		resp, err := http.Get(srv.URL + open)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", open, resp, err)
		}
		resp.Body.Close()
	}
}

func TestMetricsCanAskForTheToken(t *testing.T) {
	t.Parallel()
	n, _ := testNode(t, func(c *Config) { c.MetricsAuth = true })
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %v %v, want 401", resp, err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer secret-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics with the token: %v %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "jobctl_node_jobs_running") {
		t.Errorf("metrics lack jobctl_node_jobs_running:\n%.300s", body)
	}
}

func TestOfferOverHTTPStartsTheJobAndRecordsItsEnd(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	client := NewClient("secret-token", 5*time.Second, nil)
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
	remote := NewClient("secret-token", 5*time.Second, nil)
	offer := func(o engine.DispatchOffer) (inProcess, overHTTP engine.OfferResult) {
		return n.Accept(ctx, o), remote.Offer(ctx, &engine.Node{URL: srv.URL}, o)
	}

	exec := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"true"}, Load: 1})
	if a, b := offer(exec); a.Verdict != engine.OfferRefused || b.Verdict != engine.OfferRefused {
		t.Errorf("exec without --exec: %v / %v, want refused (412)", a, b)
	}
	badSleep := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`{"duration":"soon"}`), Load: 1})
	if a := n.Accept(ctx, badSleep); a.Verdict != engine.OfferRefused {
		t.Errorf("sleep with an invalid payload: %v, want refused", a)
	}
	huge := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 3})
	if a, b := offer(huge); a.Verdict != engine.OfferDeclined || b.Verdict != engine.OfferDeclined {
		t.Errorf("oversized job without --accept-exceeding: %v / %v, want declined", a, b)
	}
	unknown := engine.DispatchOffer{JobID: 999999, Version: 1, Type: engine.TypeNoop, Load: 1}
	if a, b := offer(unknown); a.Verdict != engine.OfferUnknownJob || b.Verdict != engine.OfferUnknownJob {
		t.Errorf("unknown job: %v / %v, want unknown (404)", a, b)
	}
	stale := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	stale.Version--
	if a, b := offer(stale); a.Verdict != engine.OfferGone || b.Verdict != engine.OfferGone {
		t.Errorf("offer of an older version: %v / %v, want gone (409)", a, b)
	}
	if j, _ := s.JobGet(ctx, stale.JobID); j.Status != engine.StatusDispatching || j.Attempt != 0 {
		t.Errorf("a refused stale offer changed the job: %s attempt %d", j.Status, j.Attempt)
	}

	// Two sleeps of load 1 fill max load 2; the third is declined as busy.
	for i := range 3 {
		o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"30s"`), Load: 1})
		res := n.Accept(ctx, o)
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

func TestReconcileFollowsCancelPauseResumeAndTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	set := func(to engine.Status) {
		j, _ := s.JobGet(ctx, o.JobID)
		if _, err := s.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}); err != nil {
			t.Fatal(err)
		}
		if err := n.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run := func() *runner.Run {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.runs[o.JobID].run
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
	if res := n.Accept(ctx, o2); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	j2, _ := s.JobGet(ctx, o2.JobID)
	if _, err := s.JobUpdate(ctx, engine.JobUpdate{ID: j2.ID, From: j2.Status, Version: j2.Version, To: engine.StatusRestart, Node: engine.Ptr("")}); err != nil {
		t.Fatal(err)
	}
	if err := n.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	n.runsDone.Wait()
	if j, _ := s.JobGet(ctx, o2.JobID); j.Status != engine.StatusRestart {
		t.Fatalf("the node overwrote a job taken from it: %s", j.Status)
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	running := &engine.Job{ID: 1, Status: engine.StatusRunning, Version: 3, Attempt: 1, MaxAttempts: 1}
	retrying := &engine.Job{ID: 1, Status: engine.StatusRunning, Version: 3, Attempt: 1, MaxAttempts: 3, Backoff: engine.Duration(time.Second)}
	cancelling := &engine.Job{ID: 1, Status: engine.StatusCancelling, Version: 3, Attempt: 1, MaxAttempts: 3}
	requeued := &engine.Job{ID: 1, Status: engine.StatusRunning, Version: 9, Attempt: 4, AttemptBase: 3, MaxAttempts: 2}
	tests := []struct {
		name     string
		job      *engine.Job
		res      runner.Result
		shutdown bool
		want     engine.Status
	}{
		{"success", running, runner.Result{Outcome: runner.Succeeded}, false, engine.StatusFinished},
		{"warning", running, runner.Result{Outcome: runner.SucceededWithWarning, Warning: "w"}, false, engine.StatusWarning},
		{"failure", running, runner.Result{Outcome: runner.Failed, ExitCode: 2}, false, engine.StatusFailed},
		{"failure with attempts left", retrying, runner.Result{Outcome: runner.Failed, ExitCode: 2}, false, engine.StatusRestart},
		{"failure after a requeue, attempts left", requeued, runner.Result{Outcome: runner.Failed, ExitCode: 2}, false, engine.StatusRestart},
		{"timeout", running, runner.Result{Outcome: runner.TimedOut, ExitCode: -1}, false, engine.StatusCancelled},
		{"operator cancel", cancelling, runner.Result{Outcome: runner.Cancelled, ExitCode: -1}, false, engine.StatusCancelled},
		{"cancel wins over success", cancelling, runner.Result{Outcome: runner.Succeeded}, false, engine.StatusCancelled},
		{"node shutdown", running, runner.Result{Outcome: runner.Cancelled, ExitCode: -1}, true, engine.StatusRestart},
	}
	for _, tt := range tests {
		u := outcome(tt.job, tt.res, tt.shutdown)
		if u.To != tt.want || u.From != tt.job.Status || u.Version != tt.job.Version {
			t.Errorf("%s: %s → %s (v%d), want → %s (v%d)", tt.name, u.From, u.To, u.Version, tt.want, tt.job.Version)
		}
		if err := u.Validate(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if (u.ExitCode != nil) != (tt.res.ExitCode >= 0) {
			t.Errorf("%s: exit code %v for result exit %d", tt.name, u.ExitCode, tt.res.ExitCode)
		}
	}
	if u := outcome(retrying, runner.Result{Outcome: runner.Failed, ExitCode: 1}, false); u.RunAfterSeconds == nil || *u.RunAfterSeconds < 0.75 || *u.RunAfterSeconds > 1.25 {
		t.Errorf("first retry after %v s, want 1s ± 25%%", u.RunAfterSeconds)
	}
}

func TestServiceConfiguration(t *testing.T) {
	t.Parallel()
	s, err := ParseServiceFlag(`transcode=/usr/bin/tc --preset "very fast"`)
	if err != nil || s.Type != "transcode" || len(s.Argv) != 3 || s.Argv[2] != "very fast" {
		t.Fatalf("ParseServiceFlag = %+v, %v", s, err)
	}
	for _, bad := range []string{"transcode", "=cmd", "x=", "exec=/bin/true", `x="unclosed`} {
		if _, err := ParseServiceFlag(bad); err == nil {
			t.Errorf("ParseServiceFlag(%q) accepted", bad)
		}
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "services:\n  transcode:\n    command: [\"/usr/bin/tc\", \"--fast\"]\n    load: 2.5\n    timeout: 1h\n  thumbs:\n    command: /usr/bin/thumbs -q\n"+
		"preferred:\n  transcode:\n    nodes: [big1, big2]\n    threshold: 0.8\n  thumbs:\n    nodes: [small]\n")
	fc, err := LoadConfigFile(good)
	svcs := fc.Services
	if err != nil || len(svcs) != 2 || svcs[0].Type != "thumbs" || svcs[1].Load != 2.5 || svcs[1].Timeout != time.Hour || len(svcs[0].Argv) != 2 {
		t.Fatalf("LoadConfigFile = %+v, %v", svcs, err)
	}
	if p := fc.Preferred; len(p) != 2 || p[0].Type != "thumbs" || p[0].Threshold != DefaultPreferThreshold ||
		p[1].Threshold != 0.8 || len(p[1].Nodes) != 2 || p[1].Nodes[1] != "big2" {
		t.Fatalf("preferred = %+v", p)
	}
	for name, body := range map[string]string{
		"unknown-field.yaml": "services:\n  x:\n    command: a\n    lod: 1\n",
		"no-command.yaml":    "services:\n  x:\n    load: 1\n",
		"bad-timeout.yaml":   "services:\n  x:\n    command: a\n    timeout: soon\n",
		"builtin.yaml":       "services:\n  sleep:\n    command: a\n",
		"prefer-nobody.yaml": "preferred:\n  x:\n    threshold: 0.5\n",
	} {
		p := filepath.Join(dir, name)
		writeFile(t, p, body)
		if _, err := LoadConfigFile(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestPreferFlag(t *testing.T) {
	t.Parallel()
	p, err := ParsePreferFlag("encode=big1, big2@0.75")
	if err != nil || p.Type != "encode" || len(p.Nodes) != 2 || p.Nodes[1] != "big2" || p.Threshold != 0.75 {
		t.Fatalf("ParsePreferFlag = %+v, %v", p, err)
	}
	if p, err := ParsePreferFlag("encode=big1"); err != nil || p.Threshold != DefaultPreferThreshold {
		t.Fatalf("without a threshold: %+v, %v", p, err)
	}
	for _, bad := range []string{"encode", "=big1", "encode=", "encode=@0.5", "encode=big1@lots"} {
		if _, err := ParsePreferFlag(bad); err == nil {
			t.Errorf("ParsePreferFlag(%q) accepted", bad)
		}
	}
	for _, bad := range [][]placement.Preferred{
		{{Type: "encode", Nodes: []string{"a"}, Threshold: 0}},
		{{Type: "encode", Nodes: []string{"a"}, Threshold: 1}, {Type: "encode", Nodes: []string{"b"}, Threshold: 1}},
	} {
		c := Defaults()
		c.Preferred = bad
		if err := c.Validate(); err == nil {
			t.Errorf("preferences %+v accepted", bad)
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAJobIsNeverRunTwiceOnOneNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	// The job is taken away and offered to this node again while its first
	// run has not ended yet (say, within its cancel grace).
	j, _ := s.JobGet(ctx, o.JobID)
	j, err := s.JobUpdate(ctx, engine.RecoverUpdate(j, "test"))
	if err != nil {
		t.Fatal(err)
	}
	j, err = s.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusDispatching, Node: engine.Ptr("n1")})
	if err != nil {
		t.Fatal(err)
	}
	again := engine.DispatchOffer{JobID: j.ID, Attempt: j.Attempt, Version: j.Version, Type: j.Type, Load: j.Load}
	if res := n.Accept(ctx, again); res.Verdict != engine.OfferDeclined {
		t.Fatalf("second offer while the first run lives: %v, want declined", res)
	}
	n.mu.Lock()
	if len(n.runs) != 1 || n.load != 1 {
		t.Errorf("books after the refused offer: %d runs, load %v; want 1 and 1", len(n.runs), n.load)
	}
	n.mu.Unlock()
	if err := n.reconcile(ctx); err != nil { // stops the run taken away
		t.Fatal(err)
	}
	n.runsDone.Wait()
	if res := n.Accept(ctx, again); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer after the first run ended: %v, want accepted", res)
	}
	j = waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusRunning })
	if j.Attempt != 2 {
		t.Fatalf("attempt %d, want 2", j.Attempt)
	}
	stopRuns(n)
}

func TestOrphanedJobsAreRecovered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	// RUNNING on this node in the store, but no run here: its result was
	// never recorded.
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	j, _ := s.JobGet(ctx, o.JobID)
	if _, err := s.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusRunning, IncrementAttempt: true}); err != nil {
		t.Fatal(err)
	}
	// A job that runs here for real is left alone.
	live := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.Accept(ctx, live); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	if err := n.recoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusRestart || j.Node != "" {
		t.Errorf("orphan = %s on %q, want RESTART with no node", j.Status, j.Node)
	}
	if j, _ := s.JobGet(ctx, live.JobID); j.Status != engine.StatusRunning {
		t.Errorf("a job that runs here became %s", j.Status)
	}
	stopRuns(n)
}

// stopRuns ends a test's runs the way a node shutdown does.
func stopRuns(n *Node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ar := range n.runs {
		ar.shutdown = true
		ar.run.Cancel("test over", time.Second)
	}
}

func TestANodeInMaintenanceDeclinesOffers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	n.mu.Lock()
	n.maintenance = true // as the touch loop mirrors it from the store
	n.mu.Unlock()
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	if res := n.Accept(ctx, o); res.Verdict != engine.OfferDeclined {
		t.Fatalf("offer to a node in maintenance: %v, want declined", res)
	}
	if j, _ := s.JobGet(ctx, o.JobID); j.Status != engine.StatusDispatching || j.Attempt != 0 {
		t.Errorf("a declined offer changed the job: %s attempt %d", j.Status, j.Attempt)
	}
}

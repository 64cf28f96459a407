package node

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestNodeMetricsCountTheClustersJobs(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	for range 2 {
		if _, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: engine.TypeNoop, Load: 1,
			Status: engine.StatusQueued, MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	m := metricsText(t, srv.URL)
	for _, want := range []string{`jobctl_jobs{status="QUEUED"} 2`, `jobctl_jobs{status="FAILED"} 0`, "jobctl_jobs_up 1", "jobctl_node_jobs_running"} {
		if !strings.Contains(m, want) {
			t.Errorf("node /metrics lacks %q", want)
		}
	}
}

// TestNodeMetricsLoadWaitAndRun: the node names itself, exports its load
// as its books hold it against its max load, and times each job's wait for
// its first start and each run, by type.
func TestNodeMetricsLoadWaitAndRun(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	want := func(what string, lines ...string) {
		t.Helper()
		m := metricsText(t, srv.URL)
		for _, l := range lines {
			if !strings.Contains(m, "\n"+l+"\n") {
				t.Errorf("%s: /metrics lacks the line %q", what, l)
			}
		}
	}
	want("idle", `jobctl_node_info{node="n1"} 1`, "jobctl_node_max_load 2", "jobctl_node_load 0")

	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"1h"`), Load: 1.5})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v", res)
	}
	waitBegun(t, n, o.JobID)
	want("running", "jobctl_node_load 1.5", `jobctl_job_wait_seconds_count{type="sleep"} 1`)
	if m := metricsText(t, srv.URL); strings.Contains(m, "jobctl_job_run_seconds_count") {
		t.Errorf("a run is timed before it ends")
	}
	stopRuns(n)
	n.runner.runsDone.Wait()
	want("ended", "jobctl_node_load 0", `jobctl_job_run_seconds_count{type="sleep"} 1`, `jobctl_job_wait_seconds_count{type="sleep"} 1`)

	// The retry of a job that went back to the queue is not a wait: its
	// queue time was its first attempt's.
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusRestart })
	o = engine.OfferOf(j, engine.LeaseTerm{})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("second offer: %+v", res)
	}
	waitBegun(t, n, o.JobID)
	want("second attempt", "jobctl_node_load 1.5", `jobctl_job_wait_seconds_count{type="sleep"} 1`)
	stopRuns(n)
	n.runner.runsDone.Wait()
	want("second attempt ended", `jobctl_job_run_seconds_count{type="sleep"} 2`)
}

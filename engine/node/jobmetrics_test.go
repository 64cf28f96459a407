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

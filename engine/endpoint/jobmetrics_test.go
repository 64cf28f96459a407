package endpoint

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

func TestMetricsCountJobsPerStatus(t *testing.T) {
	t.Parallel()
	store := memstore.New(engine.SystemClock{})
	ctx := context.Background()
	for _, st := range []engine.Status{engine.StatusQueued, engine.StatusQueued, engine.StatusInstantiated} {
		if _, err := store.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, Status: st, MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: &scriptedAcceptor{}, Metrics: testMetrics(), Jobs: store})
	body := get(t, url+"/metrics", "", http.StatusOK)
	for _, want := range []string{
		`jobctl_jobs{status="QUEUED"} 2`,
		`jobctl_jobs{status="INSTANTIATED"} 1`,
		`jobctl_jobs{status="RUNNING"} 0`,
		"jobctl_jobs_up 1",
		"jobctl_test_gauge", // the node's own series stay
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}

	// A scrape sees jobs submitted since the last one.
	if _, err := store.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, Status: engine.StatusQueued, MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	if body := get(t, url+"/metrics", "", http.StatusOK); !strings.Contains(body, `jobctl_jobs{status="QUEUED"} 3`) {
		t.Errorf("second scrape lacks the new job:\n%s", body)
	}
}

// stuckCounter is a database that never answers in time.
type stuckCounter struct{}

func (stuckCounter) JobCountByStatus(ctx context.Context, _ engine.JobListParams) (map[engine.Status]int, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestMetricsJobCountIsBounded(t *testing.T) {
	t.Parallel()
	c := newJobCollector(stuckCounter{}, 20*time.Millisecond)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	want := "# HELP jobctl_jobs_up 1 when the scrape could count the cluster's jobs, 0 when the database did not answer in time.\n" +
		"# TYPE jobctl_jobs_up gauge\njobctl_jobs_up 0\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "jobctl_jobs_up", "jobctl_jobs"); err != nil {
		t.Error(err)
	}
}

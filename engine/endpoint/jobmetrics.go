package endpoint

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobctl/jobctl/engine"
)

// JobCounter counts the cluster's jobs by status; every engine.Store is one.
type JobCounter interface {
	JobCountByStatus(ctx context.Context, p engine.JobListParams) (map[engine.Status]int, error)
}

// jobCountTimeout bounds the query a scrape runs, so a slow database makes
// a scrape miss the job series, never hang.
const jobCountTimeout = 2 * time.Second

// jobCollector exports the cluster's jobs per status as the gauge
// jobctl_jobs, read from the database when scraped. Every node exports
// the same cluster-wide figures, so one scrape of any node tells it all
// (aggregate with max, not sum, across nodes). Every status has a series,
// zero when no job has it, so a series never vanishes on its own.
type jobCollector struct {
	counter JobCounter
	timeout time.Duration
	jobs    *prometheus.Desc
	up      *prometheus.Desc
}

func newJobCollector(c JobCounter, timeout time.Duration) *jobCollector {
	return &jobCollector{
		counter: c,
		timeout: timeout,
		jobs: prometheus.NewDesc("jobctl_jobs", "Jobs in the cluster by status, read from the database at scrape time.",
			[]string{"status"}, nil),
		up: prometheus.NewDesc("jobctl_jobs_up", "1 when the scrape could count the cluster's jobs, 0 when the database did not answer in time.",
			nil, nil),
	}
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.up
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.counter.JobCountByStatus(ctx, engine.JobListParams{})
	if err != nil {
		// The rest of the node's series stay useful; jobctl_jobs_up tells
		// the missing job series apart from an empty cluster.
		slog.Debug("counting jobs for /metrics", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for _, s := range engine.AllStatuses {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// metrics are the node's Prometheus series, on a registry of its own so
// several nodes in one process (tests) do not collide.
type metrics struct {
	registry   *prometheus.Registry
	offers     *prometheus.CounterVec
	offersBy   [engine.OfferUnknownJob + 1]prometheus.Counter // offers' series by verdict
	completed  *prometheus.CounterVec
	running    prometheus.Gauge
	waiting    prometheus.Gauge
	overloaded prometheus.Gauge
	leaseHeld  prometheus.Gauge
	rounds     prometheus.Counter
	dispatched prometheus.Counter
	queueRead  prometheus.Counter
	wait       *prometheus.HistogramVec // by job type
	run        *prometheus.HistogramVec // by job type
	cpu        *prometheus.HistogramVec // by job type, of the measured runs
}

// Buckets of the time histograms, in seconds: from 10ms to about 44
// minutes of waiting, from 100ms to about 5 days of running, and from 10ms
// to about 11.6 hours of CPU time.
var (
	waitBuckets = prometheus.ExponentialBuckets(0.01, 4, 10)
	runBuckets  = prometheus.ExponentialBuckets(0.1, 4, 12)
	cpuBuckets  = prometheus.ExponentialBuckets(0.01, 4, 12)
)

// newMetrics makes the series of the node called name; its load and max
// load are read from books when scraped.
func newMetrics(name string, books *placement.Books) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		offers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobctl_node_offers_total",
			Help: "Dispatch offers answered by this node, by verdict."}, []string{"verdict"}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "jobctl_node_jobs_completed_total",
			Help: "Job runs that ended on this node, by resulting status."}, []string{"status"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_node_jobs_running",
			Help: "Jobs running on this node, not counting those waiting for their children."}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_node_jobs_waiting",
			Help: "Jobs on this node waiting for their children: they hold no load."}),
		overloaded: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_node_overloaded",
			Help: "1 while this machine is above its load-average limit or under its memory reserve: dispatchers send it no new work."}),
		leaseHeld: prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_lease_held",
			Help: "1 while this node holds the dispatcher lease."}),
		rounds: prometheus.NewCounter(prometheus.CounterOpts{Name: "jobctl_dispatch_rounds_total",
			Help: "Dispatch rounds run by this node as lease holder."}),
		dispatched: prometheus.NewCounter(prometheus.CounterOpts{Name: "jobctl_dispatched_total",
			Help: "Jobs this node's dispatcher placed on a node."}),
		queueRead: prometheus.NewCounter(prometheus.CounterOpts{Name: "jobctl_dispatch_queue_read_total",
			Help: "Queued jobs this node's dispatcher read: a round reads what it can place, not the whole queue."}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobctl_job_wait_seconds",
			Help: "How long jobs started on this node waited for their first start: from being queued " +
				"(or their start time, submit --at) to starting, on the database clock; by job type.",
			Buckets: waitBuckets}, []string{"type"}),
		run: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobctl_job_run_seconds",
			Help:    "How long each run on this node took, from its start to its end, however it ended; by job type.",
			Buckets: runBuckets}, []string{"type"}),
		cpu: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "jobctl_job_cpu_seconds",
			Help:    "CPU seconds (user + system) each measured run of a job process on this node used, its whole process tree; by job type.",
			Buckets: cpuBuckets}, []string{"type"}),
	}
	// Every offer is counted: the series are looked up once, not per offer.
	for v := range m.offersBy {
		m.offersBy[v] = m.offers.WithLabelValues(engine.OfferVerdict(v).String())
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_node_info",
		Help:        "Always 1; names the node, so its other series can be joined to its name (on instance).",
		ConstLabels: prometheus.Labels{"node": name}})
	info.Set(1)
	load := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jobctl_node_load",
		Help: "The load of the jobs this node runs now, as its books hold it (WAITING jobs hold none)."},
		func() float64 {
			l, _ := books.Totals()
			return l
		})
	maxLoad := prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_node_max_load",
		Help: "This node's max load (serve --max-load)."})
	maxLoad.Set(books.Limits().MaxLoad)
	m.registry.MustRegister(m.offers, m.completed, m.running, m.waiting, m.overloaded, m.leaseHeld, m.rounds, m.dispatched,
		m.queueRead, m.wait, m.run, m.cpu, info, load, maxLoad,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// started records how long a job waited for its first start. Retries are
// left out: they wait for their backoff, and their queue time is the
// first attempt's.
func (m *metrics) started(job *engine.Job) {
	if job.Attempt != 1 {
		return
	}
	m.wait.WithLabelValues(job.Type).Observe(max(job.Waited, 0).Seconds())
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// offer counts a verdict the node answered an offer with.
func (m *metrics) offer(v engine.OfferVerdict) {
	if int(v) < len(m.offersBy) {
		m.offersBy[v].Inc()
		return
	}
	m.offers.WithLabelValues(v.String()).Inc()
}

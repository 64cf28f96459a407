package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/jobctl/jobctl/engine"
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
}

func newMetrics() *metrics {
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
	}
	// Every offer is counted: the series are looked up once, not per offer.
	for v := range m.offersBy {
		m.offersBy[v] = m.offers.WithLabelValues(engine.OfferVerdict(v).String())
	}
	m.registry.MustRegister(m.offers, m.completed, m.running, m.waiting, m.overloaded, m.leaseHeld, m.rounds, m.dispatched,
		m.queueRead, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
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

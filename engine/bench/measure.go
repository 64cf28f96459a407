package bench

import (
	"math"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Result is what a run measured. The JSON field names are the stable
// contract of `jobctl bench -o json`.
type Result struct {
	Mode          string  `json:"mode"`
	Dialect       string  `json:"dialect"`
	Nodes         int     `json:"nodes"`
	Jobs          int     `json:"jobs"`    // jobs that ended in the measured span
	Seconds       float64 `json:"seconds"` // the measured span, on the database's clock
	JobsPerSecond float64 `json:"jobs_per_second"`
	LatencyP50Ms  float64 `json:"latency_p50_ms"` // submit (created_at) to start (started_at)
	LatencyP95Ms  float64 `json:"latency_p95_ms"`
	LatencyP99Ms  float64 `json:"latency_p99_ms"`

	// NotFinished counts the jobs among Jobs that ended other than FINISHED.
	NotFinished int `json:"-"`
	// OtherNodes counts ONLINE nodes that were not the benchmark's own yet
	// offered noop jobs: they took part in the run.
	OtherNodes int `json:"-"`
}

// span is the stretch of database time a run measures.
type span struct{ from, to time.Time }

func (s span) holds(t *time.Time) bool {
	return t != nil && !t.Before(s.from) && !t.After(s.to)
}

// tally sums up the run's jobs, a page at a time.
type tally struct {
	jobs, notFinished int
	latencies         []float64 // ms from submission to start, of the jobs that started in the span
	lastEnd           time.Time // the latest end of a job that ended in the span
}

// add counts the jobs that ended within s and the latencies of those that
// started within it.
func (t *tally) add(jobs []engine.JobTimes, s span) {
	for _, j := range jobs {
		if j.Status.Terminal() && s.holds(j.FinishedAt) {
			t.jobs++
			if j.Status != engine.StatusFinished {
				t.notFinished++
			}
			if j.FinishedAt.After(t.lastEnd) {
				t.lastEnd = *j.FinishedAt
			}
		}
		if s.holds(j.StartedAt) {
			t.latencies = append(t.latencies, float64(j.StartedAt.Sub(j.CreatedAt))/float64(time.Millisecond))
		}
	}
}

// fill writes the figures of span s into r.
func (t *tally) fill(r *Result, s span) {
	r.Jobs, r.NotFinished = t.jobs, t.notFinished
	r.Seconds = s.to.Sub(s.from).Seconds()
	r.JobsPerSecond = 0
	if r.Seconds > 0 {
		r.JobsPerSecond = float64(r.Jobs) / r.Seconds
	}
	slices.Sort(t.latencies)
	r.LatencyP50Ms = percentile(t.latencies, 50)
	r.LatencyP95Ms = percentile(t.latencies, 95)
	r.LatencyP99Ms = percentile(t.latencies, 99)
}

// percentile is the nearest-rank percentile p of sorted values: the
// smallest value at least p percent of them do not exceed; 0 for none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

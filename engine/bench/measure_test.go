package bench

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestPercentileIsNearestRank(t *testing.T) {
	values := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    float64
		want float64
	}{{50, 5}, {95, 10}, {99, 10}, {10, 1}, {11, 2}, {100, 10}, {0, 1}} {
		if got := percentile(values, c.p); got != c.want {
			t.Errorf("p%v of 1..10 = %v; want %v", c.p, got, c.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v; want 0", got)
	}
	if got := percentile([]float64{7}, 99); got != 7 {
		t.Errorf("p99 of one value = %v; want it", got)
	}
}

func TestSummarizeCountsOnlyTheSpan(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	job := func(status engine.Status, created int, started, finished *time.Time) engine.JobTimes {
		return engine.JobTimes{Status: status, CreatedAt: *at(created), StartedAt: started, FinishedAt: finished}
	}
	jobs := []engine.JobTimes{
		job(engine.StatusFinished, 0, at(10), at(20)),       // in the span, 10ms
		job(engine.StatusFinished, 100, at(130), at(140)),   // in the span, 30ms
		job(engine.StatusFailed, 200, at(220), at(230)),     // in the span, not FINISHED, 20ms
		job(engine.StatusFinished, 900, at(1900), at(2100)), // started in the span, ended after it
		job(engine.StatusRunning, 500, at(600), nil),        // started, not ended
		job(engine.StatusQueued, 700, nil, nil),             // never started
		job(engine.StatusFinished, -500, at(-10), at(-5)),   // before the span
	}
	var r Result
	var all tally
	all.add(jobs, span{from: t0, to: *at(2000)})
	all.fill(&r, span{from: t0, to: *at(2000)})
	if r.Jobs != 3 || r.NotFinished != 1 {
		t.Errorf("jobs %d, not finished %d; want 3 and 1", r.Jobs, r.NotFinished)
	}
	if r.Seconds != 2 || r.JobsPerSecond != 1.5 {
		t.Errorf("seconds %v, jobs/s %v; want 2 and 1.5", r.Seconds, r.JobsPerSecond)
	}
	// Latencies of the five jobs that started in the span: 10, 20, 30, 100, 1000 ms.
	if r.LatencyP50Ms != 30 || r.LatencyP95Ms != 1000 || r.LatencyP99Ms != 1000 {
		t.Errorf("latency p50 %v, p95 %v, p99 %v; want 30, 1000, 1000", r.LatencyP50Ms, r.LatencyP95Ms, r.LatencyP99Ms)
	}
	// Paged, and with no end to the span (a burn-down's, cut at its last
	// job's end afterwards).
	var paged tally
	open := span{from: t0, to: time.Unix(1<<40, 0)}
	paged.add(jobs[:3], open)
	paged.add(jobs[3:], open)
	if !paged.lastEnd.Equal(*at(2100)) || paged.jobs != 4 {
		t.Errorf("last end %s of %d jobs; want the FINISHED job's at 2.1s of 4", paged.lastEnd, paged.jobs)
	}
}

func TestSummarizeOfNothing(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	var r Result
	var none tally
	none.add(nil, span{from: t0, to: t0})
	none.fill(&r, span{from: t0, to: t0})
	if r != (Result{}) {
		t.Errorf("empty run: %+v; want zeros", r)
	}
}

func TestBacklogAndPace(t *testing.T) {
	if got := backlogFor(0, 0, 0); got != minBacklog {
		t.Errorf("backlog of no capacity = %d; want %d", got, minBacklog)
	}
	if got := backlogFor(2000, 100, time.Second); got != 4000 {
		t.Errorf("backlog of 2000 slots = %d; want 4000", got)
	}
	if got := backlogFor(10, 9000.5, 0); got != 18001 {
		t.Errorf("backlog at 9000 jobs/s, looks a second apart at most = %d; want two seconds' worth", got)
	}
	if got := backlogFor(10, 9000, 3*time.Second); got != 54000 {
		t.Errorf("backlog at 9000 jobs/s, looks 3s apart = %d; want two looks' worth", got)
	}
	if got := due(200, 1500*time.Millisecond); got != 300 {
		t.Errorf("due after 1.5s at 200/s = %d; want 300", got)
	}
}

func TestValidate(t *testing.T) {
	good := []Config{
		{BurnDown: 10, Nodes: 1},
		{Duration: time.Second, Rate: 5, Nodes: 3, MaxJobs: 10, DispatchInterval: time.Millisecond},
		{Duration: time.Second, Cluster: true},
	}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []Config{
		{Nodes: 1},
		{BurnDown: 10, Duration: time.Second, Nodes: 1},
		{BurnDown: -1, Nodes: 1},
		{Duration: -time.Second, Nodes: 1},
		{BurnDown: 10, Rate: 5, Nodes: 1},
		{Duration: time.Second, Rate: -1, Nodes: 1},
		{BurnDown: 10},
		{BurnDown: 10, Cluster: true, Nodes: 2},
		{BurnDown: 10, Nodes: 1, MaxJobs: -1},
		{BurnDown: 10, Nodes: 1, DispatchInterval: -time.Second},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}

// A look waits twenty times as long as the last one took, and a quarter of
// the stall timeout at most.
func TestLookSpacing(t *testing.T) {
	r := &run{cfg: &Config{StallTimeout: time.Minute}}
	if !r.lookDue() {
		t.Error("the first look is not due")
	}
	r.lookEnded, r.lookTook = time.Now(), 100*time.Millisecond
	if r.lookDue() {
		t.Error("a look is due at once after one that took 100ms")
	}
	r.lookEnded = time.Now().Add(-2100 * time.Millisecond)
	if !r.lookDue() {
		t.Error("no look is due 2.1s after one that took 100ms")
	}
	r.lookEnded, r.lookTook = time.Now().Add(-16*time.Second), 10*time.Second
	if !r.lookDue() {
		t.Error("no look is due 16s after one that took 10s, past a quarter of the stall timeout")
	}
}

// A burn-down looks once its jobs should have ended at the rate seen last,
// however long its last look took; a run of a fixed duration does not.
func TestBurnDownLooksAtItsExpectedEnd(t *testing.T) {
	r := &run{cfg: &Config{BurnDown: 1000, StallTimeout: time.Minute}}
	r.lookEnded, r.lookTook = time.Now().Add(-time.Second), time.Second // spaced: 15s
	r.active, r.rate = 100, 1000                                        // ends in 100ms
	if !r.lookDue() {
		t.Error("no look is due 1s after the last, 0.1s of jobs ago")
	}
	r.rate = 10 // ends in 10s
	if r.lookDue() {
		t.Error("a look is due 1s after the last, with 10s of jobs left and 15s of spacing")
	}
	r.cfg.BurnDown, r.rate = 0, 1000
	if r.lookDue() {
		t.Error("a run of a fixed duration looks before its spacing")
	}
}

// Between two looks a run counts the jobs that should have ended at the
// rate it measured, so that it keeps its queue filled while it does not
// look; it never counts fewer than none waiting.
func TestWaitingCountsTheEndsSinceTheLastLook(t *testing.T) {
	look := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &run{feeder: &feeder{inserted: 10000}, done: 4000, lastLook: look, rate: 1000}
	if got := r.waiting(look); got != 6000 {
		t.Errorf("waiting at the look = %d; want the 6000 it counted", got)
	}
	if got := r.waiting(look.Add(2500 * time.Millisecond)); got != 3500 {
		t.Errorf("waiting 2.5s after the look at 1000/s = %d; want 3500", got)
	}
	if got := r.waiting(look.Add(10 * time.Second)); got != 0 {
		t.Errorf("waiting 10s after the look at 1000/s = %d; want none", got)
	}
	r.rate = 0
	if got := r.waiting(look.Add(10 * time.Second)); got != 6000 {
		t.Errorf("waiting with no rate measured yet = %d; want the 6000 counted", got)
	}
}

// Only a run whose last look found every job ended, with none inserted
// since, skips the passes that cancel what waits.
func TestAllEndedNeedsALookThatFoundNoneLive(t *testing.T) {
	r := &run{feeder: &feeder{}}
	if r.allEnded() {
		t.Error("a run that inserted nothing and never looked has all ended")
	}
	r.feeder.inserted = 10
	if r.allEnded() {
		t.Error("a run that never looked has all ended")
	}
	r.lastLook, r.counted, r.active = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), 10, 3
	if r.allEnded() {
		t.Error("a run with 3 live jobs at its last look has all ended")
	}
	r.active = 0
	if !r.allEnded() {
		t.Error("a run whose last look found none live has not all ended")
	}
	r.feeder.inserted = 20
	if r.allEnded() {
		t.Error("a run that inserted 10 jobs after its last look found none live has all ended")
	}
}

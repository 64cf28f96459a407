package dbstore

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// batchSize is the size of the dispatcher's pages and of a node's batches
// of starts and results.
const batchSize = 500

// BenchmarkJobUpdateMany measures the batched steps of the hot path on
// each backend: a node starting the jobs it accepted, which is their claim
// (QUEUED or RESTART → RUNNING on several nodes; plain, and under a lease
// term as a dispatcher's offers are) and a node recording finished runs
// (RUNNING → FINISHED, FAILED or RESTART). The same jobs go round the cycle, so no
// iteration pays for inserts; the steps that bring them back to where the
// measured step starts are not timed.
func BenchmarkJobUpdateMany(b *testing.B) {
	if testing.Short() {
		b.Skip("needs the test databases; runs without -short")
	}
	backends := []struct {
		name string
		open func(b *testing.B) *Store
	}{
		{"sqlite", func(b *testing.B) *Store {
			return migrated(b, openSQLite(b, filepath.Join(b.TempDir(), "jobctl.db")))
		}},
		{"postgres", func(b *testing.B) *Store { return migrated(b, openStore(b, postgresSchemaDSN(b))) }},
		{"mysql", func(b *testing.B) *Store { return migrated(b, openStore(b, mysqlDatabaseDSN(b))) }},
	}
	for _, backend := range backends {
		b.Run(backend.name, func(b *testing.B) {
			b.Run("start", func(b *testing.B) {
				c := newBatchCycle(b, backend.open(b))
				for b.Loop() {
					c.step(startUpdate)
					b.StopTimer()
					c.step(stopUpdate)
					b.StartTimer()
				}
				reportJobsPerSecond(b)
			})
			// A node starting what a dispatcher offered under its lease
			// term: the same step, guarded by the lease row.
			b.Run("start-under-term", func(b *testing.B) {
				s := backend.open(b)
				term, err := s.LeaseAcquire(b.Context(), "bench", time.Hour)
				if err != nil || !term.Held() {
					b.Fatalf("LeaseAcquire = %v, %v", term, err)
				}
				c := newBatchCycle(b, s)
				startUnder := func(i int, j *engine.Job) engine.JobUpdate {
					u := startUpdate(i, j)
					u.StartedUnder = &term
					return u
				}
				for b.Loop() {
					c.step(startUnder)
					b.StopTimer()
					c.step(stopUpdate)
					b.StartTimer()
				}
				reportJobsPerSecond(b)
			})
			b.Run("finish", func(b *testing.B) {
				c := newBatchCycle(b, backend.open(b))
				for b.Loop() {
					b.StopTimer()
					c.step(startUpdate)
					b.StartTimer()
					c.step(finishUpdate)
					b.StopTimer()
					c.step(requeueUpdate)
					b.StartTimer()
				}
				reportJobsPerSecond(b)
			})
		})
	}
}

func reportJobsPerSecond(b *testing.B) {
	b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "jobs/s")
}

// batchCycle is a batch of jobs moved through the hot path's states, one
// JobUpdateMany per step.
type batchCycle struct {
	b    *testing.B
	s    *Store
	jobs []*engine.Job
	us   []engine.JobUpdate
}

// newBatchCycle inserts batchSize queued jobs, each with attempts to spare
// so a failed run goes to RESTART.
func newBatchCycle(b *testing.B, s *Store) *batchCycle {
	c := &batchCycle{b: b, s: s, us: make([]engine.JobUpdate, batchSize)}
	for range batchSize {
		j, err := s.JobInsert(b.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued,
			Load: 1, MaxAttempts: 1000})
		if err != nil {
			b.Fatal(err)
		}
		c.jobs = append(c.jobs, j)
	}
	return c
}

// step applies next to every job in one call; every transition must apply.
func (c *batchCycle) step(next func(i int, j *engine.Job) engine.JobUpdate) {
	for i, j := range c.jobs {
		c.us[i] = next(i, j)
	}
	res, err := c.s.JobUpdateMany(c.b.Context(), c.us)
	if err != nil {
		c.b.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			c.b.Fatalf("job %d: %v", c.jobs[i].ID, r.Err)
		}
		c.jobs[i] = r.Job
	}
}

func startUpdate(i int, j *engine.Job) engine.JobUpdate {
	return engine.QueuedStartUpdate(j, fmt.Sprintf("node-%d", i%8))
}

// stopUpdate is a node's clean shutdown: the run goes back to RESTART.
func stopUpdate(_ int, j *engine.Job) engine.JobUpdate {
	return engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, true, func() float64 { return 0.5 })
}

// finishUpdate ends a third of the runs each way: success, failure with a
// retry (exit code, message, run_after) and failure for good.
func finishUpdate(i int, j *engine.Job) engine.JobUpdate {
	switch i % 3 {
	case 0:
		return engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit status 0"}, false, nil)
	case 1:
		return engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunFailed, ExitCode: 2, Reason: "exit status 2"},
			false, func() float64 { return 0.5 })
	}
	return engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusFailed,
		ExitCode: engine.Ptr(1), Message: engine.Ptr("exit status 1"), MarkFinished: true}
}

// requeueUpdate brings a finished job back to RESTART, as an operator's
// requeue does; a job already there is paused in the queue instead, which
// a start takes up as it takes up RESTART (the state machine lets a paused
// job run), so every job of the batch has a transition to make.
func requeueUpdate(_ int, j *engine.Job) engine.JobUpdate {
	if j.Status == engine.StatusRestart {
		return engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusPaused, Node: engine.Ptr("")}
	}
	return engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusRestart,
		ClearResult: true, RebaseAttempts: true, Node: engine.Ptr("")}
}

package node

import (
	"cmp"
	"slices"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// runningUsage is what the node measures of each job process it runs now,
// ordered by job, for its liveness report.
func (r *jobRunner) runningUsage() []engine.LiveUsage {
	r.mu.Lock()
	runs := make([]*runner.Run, 0, len(r.runs))
	for _, ar := range r.runs {
		if ar.run != nil {
			runs = append(runs, ar.run)
		}
	}
	r.mu.Unlock()
	usage := runner.Live(runs)
	slices.SortFunc(usage, func(a, b engine.LiveUsage) int { return cmp.Compare(a.JobID, b.JobID) })
	return usage
}

// observeEnd counts the CPU time of a run that was measured. (Its wait and
// run time are counted where it starts and ends, in start.)
func (r *jobRunner) observeEnd(ar *activeRun, res runner.Result) {
	if ar.job == nil || ar.job.Type == "" || res.Usage == nil {
		return // not measured, or a result replayed from disk: its run was another process's
	}
	r.metrics.cpu.WithLabelValues(ar.job.Type).Observe(res.Usage.CPUSeconds)
}

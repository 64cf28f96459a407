package node

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/cgroup"
	"github.com/jobctl/jobctl/engine/runner"
)

// openCgroups makes this node's cgroups where the machine lets it, so
// each job process runs in a group of its own, and says in one line how
// the node measures its jobs and, with --enforce, what it enforces and
// what it cannot.
func (r *jobRunner) openCgroups() {
	m, err := cgroup.Open(cgroup.Options{Name: r.cfg.Name, Limits: r.cfg.Enforce})
	if err != nil {
		msg := "jobs are measured by the kernel's accounting of the processes they reap, not in a cgroup of their own: " + err.Error()
		if r.cfg.Enforce {
			r.log.Warn(msg + "; --enforce enforces nothing")
		} else {
			r.log.Info(msg)
		}
		return
	}
	r.cgroups = m
	s := m.Support()
	level := slog.LevelInfo
	if r.cfg.Enforce && !(s.CPUShare && s.MemoryLimit) {
		level = slog.LevelWarn
	}
	r.log.Log(context.Background(), level, s.Describe(r.cfg.Enforce))
}

// closeCgroups removes the node's cgroups once it has no runs left.
func (r *jobRunner) closeCgroups() {
	if r.cgroups == nil {
		return
	}
	if err := r.cgroups.Close(); err != nil {
		r.log.Warn("cannot remove the node's cgroups", "err", err)
	}
}

// jobGroup makes the cgroup of a job process's run, with the limits the
// node enforces: a CPU share from its load, and its memory limit (else its
// service's). Nil for a builtin, on a node without cgroups, and when the
// group cannot be made (the run is then measured by what it reaps).
func (r *jobRunner) jobGroup(h handler, job *engine.Job, attempt int) *cgroup.Group {
	if r.cgroups == nil || h.builtin != nil {
		return nil
	}
	l := cgroup.Limits{Load: job.Load, CPUShare: r.cfg.Enforce, Memory: cmp.Or(job.MemoryLimit, h.memory)}
	g, err := r.cgroups.NewGroup(fmt.Sprintf("job-%d-%d", job.ID, attempt), l)
	if err != nil {
		r.log.Warn("cannot make the job's cgroup; it runs without, measured by the processes it reaps", "job", job.ID, "err", err)
		return nil
	}
	return g
}

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

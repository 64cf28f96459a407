package simulate

import (
	"context"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// noopDuration stands for a noop job's run, which ends at once: a
// duration of 0 would mean it never ends.
const noopDuration = time.Millisecond

// ClusterSource is what FromCluster reads of a live cluster: its nodes,
// its jobs and what the runs of each type measured.
type ClusterSource interface {
	Now(ctx context.Context) (time.Time, error)
	NodeList(ctx context.Context) ([]*engine.Node, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
	JobAttemptUsageList(ctx context.Context, p engine.JobAttemptUsageParams) ([]engine.AttemptUsage, error)
}

// FromCluster reads the simulation's input from a live cluster: its ONLINE
// nodes as they are configured and report their health, the jobs they run
// now, which stay where they are, and its queued jobs, all submitted at the
// run's start. A sleep job runs for its payload's duration (a running one
// for what is left of it) and a noop job ends at once; any other job runs
// for the median of its type's latest measured runs (engine.TypeUsage
// WallP50), and one of a type never measured never ends.
func FromCluster(ctx context.Context, store ClusterSource) ([]NodeSpec, []JobSpec, error) {
	now, err := store.Now(ctx)
	if err != nil {
		return nil, nil, err
	}
	rows, err := store.NodeList(ctx)
	if err != nil {
		return nil, nil, err
	}
	var nodes []NodeSpec
	for _, n := range rows {
		if n.State != engine.NodeOnline {
			continue
		}
		spec := NodeSpec{
			Name: n.Name, MaxLoad: n.MaxLoad, MaxJobs: n.MaxJobs, Weight: n.Weight,
			StartedAgo: Duration(max(now.Sub(n.StartedAt), 0)), Warmup: engine.Ptr(Duration(n.Warmup)),
			AcceptExceeding: engine.Ptr(n.AcceptExceeding), LoadAvg: n.LoadAvg, Cores: n.Cores,
			Memory: Bytes(n.MemAvailable), MaxLoadAvg: engine.Ptr(n.MaxLoadAvg), ReservedMemory: Bytes(n.ReservedMemory),
		}
		for _, s := range n.Services {
			spec.Services = append(spec.Services, s.Type)
		}
		nodes = append(nodes, spec)
	}
	online := map[string]bool{}
	for _, n := range nodes {
		online[n.Name] = true
	}
	active, err := store.JobList(ctx, engine.JobListParams{Statuses: engine.LoadHoldingStatuses})
	if err != nil {
		return nil, nil, err
	}
	queued, err := store.JobList(ctx, engine.JobListParams{Statuses: engine.DispatchableStatuses})
	if err != nil {
		return nil, nil, err
	}
	var all []*engine.Job
	for _, j := range active {
		if j.HoldsLoad() && online[j.Node] {
			all = append(all, j)
		}
	}
	all = append(all, queued...)
	measured, err := measuredDurations(ctx, store, all)
	if err != nil {
		return nil, nil, err
	}
	listed := make(map[int64]bool, len(all))
	for _, j := range all {
		listed[j.ID] = true
	}
	jobs := make([]JobSpec, 0, len(all))
	for _, j := range all {
		spec := JobSpec{ID: j.ID, Type: j.Type, Load: engine.Ptr(j.Load), Key: j.Key}
		if j.Status.Dispatchable() {
			spec.Duration = Duration(runningTime(j, measured))
		} else {
			spec.runningOn, spec.Duration = j.Node, Duration(timeLeft(j, now, measured))
		}
		if j.ParentID != nil && listed[*j.ParentID] {
			spec.Parent = *j.ParentID
		}
		jobs = append(jobs, spec)
	}
	return nodes, jobs, nil
}

// measuredDurations is the median running time of the latest measured
// runs of each type of jobs but noop and sleep, whose running times the
// jobs themselves say.
func measuredDurations(ctx context.Context, store ClusterSource, jobs []*engine.Job) (map[string]time.Duration, error) {
	var types []string
	for _, j := range jobs {
		if j.Type != engine.TypeNoop && j.Type != engine.TypeSleep && !slices.Contains(types, j.Type) {
			types = append(types, j.Type)
		}
	}
	out := map[string]time.Duration{}
	if len(types) == 0 {
		return out, nil
	}
	attempts, err := store.JobAttemptUsageList(ctx, engine.JobAttemptUsageParams{Types: types, Runs: engine.DefaultUsageRuns})
	if err != nil {
		return nil, err
	}
	for _, u := range engine.SummarizeUsage(attempts) {
		if d := time.Duration(u.WallP50 * float64(time.Second)); d > 0 {
			out[u.Type] = max(d, noopDuration)
		}
	}
	return out, nil
}

// timeLeft is how much longer a job running on the cluster has to go: the
// rest of a sleep or of its type's measured running time, no time for one
// being cancelled, and 0 (no end) for a paused job or one whose running
// time cannot be known.
func timeLeft(j *engine.Job, now time.Time, measured map[string]time.Duration) time.Duration {
	total := runningTime(j, measured)
	switch {
	case j.Status == engine.StatusCancelling:
		return noopDuration
	case j.Status == engine.StatusPaused || total == 0 || j.StartedAt == nil:
		return total
	}
	return max(total-now.Sub(*j.StartedAt), noopDuration)
}

// runningTime is how long a job of the cluster would run, 0 when unknown:
// a noop at once, a sleep for its payload's time, any other job for its
// type's measured median.
func runningTime(j *engine.Job, measured map[string]time.Duration) time.Duration {
	switch j.Type {
	case engine.TypeNoop:
		return noopDuration
	case engine.TypeSleep:
		if d, err := runner.SleepDuration(runner.Spec{Argv: j.Args, Stdin: j.Payload}); err == nil && d > 0 {
			return d
		}
		return noopDuration // the sleep fails at once
	}
	return measured[j.Type]
}

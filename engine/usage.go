package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Usage is what one run of a job really used, as its node measured it: the
// CPU time and peak memory of the job's whole process tree, from the run's
// own cgroup where the node could make one, else from the kernel's
// accounting of the processes the run reaped (which misses a grandchild
// its parent never waited for). Field names in JSON are stable.
type Usage struct {
	// CPUSeconds is user plus system CPU time.
	CPUSeconds float64 `json:"cpu_seconds"`
	// PeakMemory is the most memory the run held at once, in bytes: its
	// cgroup's peak (which counts the page cache it caused), else the
	// largest resident set of one of its processes.
	PeakMemory int64 `json:"peak_memory_bytes"`
	// WallSeconds is how long the run took, from start to end on its node.
	WallSeconds float64 `json:"wall_seconds"`
	// OOMKilled: a process of the run was killed at the run's memory limit
	// (submit --memory on a node with --enforce).
	OOMKilled bool `json:"oom_killed"`
}

// Cores is the CPU the run used on average: CPU seconds per wall second.
func (u Usage) Cores() float64 {
	if u.WallSeconds <= 0 {
		return 0
	}
	return u.CPUSeconds / u.WallSeconds
}

// LiveUsage is what a node last measured of a job it runs now, reported
// with its liveness (Node.RunningUsage).
type LiveUsage struct {
	JobID   int64 `json:"job_id"`
	Attempt int   `json:"attempt"`
	// CPUSeconds is the CPU time used so far; Cores the CPU used since the
	// node's sample before, per wall second.
	CPUSeconds float64 `json:"cpu_seconds"`
	Cores      float64 `json:"cores"`
	// Memory is the memory the job holds now, in bytes.
	Memory int64 `json:"memory_bytes"`
}

// MessageOutOfMemory is the reason of a run killed at its memory limit:
// "killed: out of memory, limit 2GiB".
func MessageOutOfMemory(limit int64) string {
	return "killed: out of memory, limit " + FormatSize(limit)
}

// AttemptUsage is one ended attempt with its measured use, and the type
// and load its job declared: what the statistics of a type are made of.
type AttemptUsage struct {
	JobID   int64     `json:"job_id"`
	Attempt int       `json:"attempt"`
	Type    string    `json:"type"`
	Load    float64   `json:"load"`
	EndedAt time.Time `json:"ended_at"`
	Usage   Usage     `json:"usage"`
}

// JobAttemptUsageParams select the attempts of Store.JobAttemptUsageList.
type JobAttemptUsageParams struct {
	// Types keeps only these job types; empty: every type.
	Types []string
	// Runs is how many of the newest measured attempts of each type to
	// return; at least 1.
	Runs int
}

// DefaultUsageRuns is how many of a type's latest measured runs its
// statistics cover unless asked otherwise.
const DefaultUsageRuns = 50

// When a type's declared load is far from what its runs use: the 95th
// percentile of the cores its runs used is above LoadOverFactor times the
// declared load, or below LoadUnderFactor times it, over at least
// LoadCheckMinRuns measured runs, and differs from the declared load by at
// least LoadCheckMinCores (so a load-0 job that uses a sliver of a core is
// not flagged).
const (
	LoadOverFactor    = 1.5
	LoadUnderFactor   = 0.5
	LoadCheckMinRuns  = 5
	LoadCheckMinCores = 0.25
)

// LoadVerdict says how a type's declared load compares with what it uses.
type LoadVerdict string

// The verdicts of TypeUsage.Verdict.
const (
	LoadMatches  LoadVerdict = "ok"           // within the bounds
	LoadUsesMore LoadVerdict = "uses-more"    // its runs use far more than declared
	LoadUsesLess LoadVerdict = "uses-less"    // its runs use far less than declared
	LoadFewRuns  LoadVerdict = "too-few-runs" // fewer than LoadCheckMinRuns measured runs: no verdict
)

// TypeUsage is the measured use of one job type over its latest runs,
// beside the load its jobs declared. Field names in JSON are stable.
type TypeUsage struct {
	Type string `json:"type"`
	// DeclaredLoad is the median load the runs' jobs were submitted with.
	DeclaredLoad float64 `json:"declared_load"`
	Runs         int     `json:"runs"`
	CoresP50     float64 `json:"cores_p50"`
	CoresP95     float64 `json:"cores_p95"`
	MemoryP95    int64   `json:"memory_p95_bytes"`
	// WallP50 is the median running time, in seconds.
	WallP50   float64 `json:"wall_p50_seconds"`
	OOMKilled int     `json:"oom_killed"` // runs killed at their memory limit
	// Verdict says whether the declared load is far from the use (see
	// LoadOverFactor); Note says so in one line, "" when it is not.
	Verdict LoadVerdict `json:"verdict"`
	Note    string      `json:"note"`
}

// SummarizeUsage makes the statistics of each type from its measured
// attempts, ordered by type.
func SummarizeUsage(attempts []AttemptUsage) []TypeUsage {
	byType := map[string][]AttemptUsage{}
	for _, a := range attempts {
		byType[a.Type] = append(byType[a.Type], a)
	}
	out := make([]TypeUsage, 0, len(byType))
	for typ, runs := range byType {
		out = append(out, summarizeType(typ, runs))
	}
	slices.SortFunc(out, func(a, b TypeUsage) int { return cmp.Compare(a.Type, b.Type) })
	return out
}

func summarizeType(typ string, runs []AttemptUsage) TypeUsage {
	n := len(runs)
	loads, cores, walls := make([]float64, n), make([]float64, n), make([]float64, n)
	mem := make([]float64, n)
	tu := TypeUsage{Type: typ, Runs: n}
	for i, r := range runs {
		loads[i], cores[i], walls[i] = r.Load, r.Usage.Cores(), r.Usage.WallSeconds
		mem[i] = float64(r.Usage.PeakMemory)
		if r.Usage.OOMKilled {
			tu.OOMKilled++
		}
	}
	tu.DeclaredLoad = Percentile(loads, 50)
	tu.CoresP50, tu.CoresP95 = Percentile(cores, 50), Percentile(cores, 95)
	tu.MemoryP95 = int64(Percentile(mem, 95))
	tu.WallP50 = Percentile(walls, 50)
	tu.Verdict = JudgeLoad(tu.DeclaredLoad, tu.CoresP95, n)
	if tu.Verdict == LoadUsesMore || tu.Verdict == LoadUsesLess {
		tu.Note = fmt.Sprintf("%s: declared load %s, uses %s cores p95 over %d runs",
			typ, FormatNumber(tu.DeclaredLoad), FormatNumber(tu.CoresP95), n)
	}
	return tu
}

// JudgeLoad compares a declared load with the 95th percentile of the cores
// runs measured over runs runs used; see LoadOverFactor.
func JudgeLoad(declared, coresP95 float64, runs int) LoadVerdict {
	switch {
	case runs < LoadCheckMinRuns:
		return LoadFewRuns
	case math.Abs(coresP95-declared) < LoadCheckMinCores:
		return LoadMatches
	case coresP95 > LoadOverFactor*declared:
		return LoadUsesMore
	case coresP95 < LoadUnderFactor*declared:
		return LoadUsesLess
	}
	return LoadMatches
}

// Percentile is the p-th percentile (0–100) of values by the nearest-rank
// method: the smallest value at least p percent of them are at or below.
// 0 for no values. values is sorted in place.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	slices.Sort(values)
	rank := int(math.Ceil(p / 100 * float64(len(values))))
	return values[min(max(rank, 1), len(values))-1]
}

// CheckUsage refuses a transition whose usage no store could keep as
// given: a figure that is negative or not a finite number.
func CheckUsage(u JobUpdate) error {
	us := u.Usage
	if us == nil {
		return nil
	}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 }
	if !finite(us.CPUSeconds) || !finite(us.WallSeconds) || us.PeakMemory < 0 {
		return &TransitionError{ID: u.ID, From: u.From, To: u.To,
			Reason: fmt.Sprintf("usage %+v has a figure that is negative or not a number", *us)}
	}
	return nil
}

// ParseMemoryLimit reads a job's memory limit as operators write it: a
// size such as 64MiB or 2GiB (see ParseBytes), or 0 or "none" for no limit
// of its own.
func ParseMemoryLimit(s string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "none") {
		return 0, nil
	}
	v, err := ParseBytes(s)
	if err != nil {
		return 0, err
	}
	if v != 0 && (v < MinMemoryLimit || v > MaxMemoryLimit) {
		return 0, fmt.Errorf("%q is not between %s and %s (or 0 for none)", s, FormatSize(MinMemoryLimit), FormatSize(MaxMemoryLimit))
	}
	return v, nil
}

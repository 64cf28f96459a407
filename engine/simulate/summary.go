package simulate

import (
	"math"
	"slices"
	"time"
)

// Summary are the figures a run is judged by. Times are seconds from the
// start of the run.
type Summary struct {
	Placed      int `json:"placed"`
	NeverPlaced int `json:"never_placed"`
	// MakespanS is when the last placed job ended (or started, for one that
	// never ends).
	MakespanS float64 `json:"makespan_s"`
	// Waits are from submission to start, over the placed jobs.
	MeanWaitS float64 `json:"mean_wait_s"`
	P95WaitS  float64 `json:"p95_wait_s"`
	P99WaitS  float64 `json:"p99_wait_s"`
	// MeanUtilisation is the load carried over the makespan as a share of
	// the cluster's max load over that time.
	MeanUtilisation float64 `json:"mean_utilisation"`
	// MaxLoadFactor is the highest load / max load any node reached.
	MaxLoadFactor float64 `json:"max_load_factor"`
	// Declines counts offers a node turned down (busy, not ready).
	Declines int `json:"declines"`
}

func (s *sim) summary() Summary {
	sum := Summary{Placed: len(s.placements), NeverPlaced: len(s.cfg.Jobs) - s.resumed - len(s.placements),
		Declines: s.declines, MaxLoadFactor: round(s.maxFactor, 4)}
	makespan := s.makespan()
	sum.MakespanS = seconds(makespan)
	if len(s.waits) > 0 {
		var total time.Duration
		for _, w := range s.waits {
			total += w
		}
		sorted := slices.Clone(s.waits)
		slices.Sort(sorted)
		sum.MeanWaitS = seconds(total / time.Duration(len(sorted)))
		sum.P95WaitS = seconds(percentile(sorted, 0.95))
		sum.P99WaitS = seconds(percentile(sorted, 0.99))
	}
	var carried, capacity float64
	for _, n := range s.nodeList {
		n.settle(makespan)
		carried += n.loadSeconds
		capacity += n.spec.MaxLoad * makespan.Seconds()
	}
	if capacity > 0 {
		sum.MeanUtilisation = round(carried/capacity, 4)
	}
	return sum
}

// makespan is when the last placed job ended, or started for one that
// never ends.
func (s *sim) makespan() time.Duration {
	var last time.Duration
	for _, p := range s.placements {
		end := p.StartS
		if p.EndS != nil {
			end = *p.EndS
		}
		last = max(last, time.Duration(math.Round(end*1000))*time.Millisecond)
	}
	return last
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func round(v float64, places int) float64 {
	f := math.Pow(10, float64(places))
	return math.Round(v*f) / f
}

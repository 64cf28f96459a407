package simulate

import "time"

// Timeline is every node's load over one run, for charts.
type Timeline struct {
	End   time.Duration // the makespan: charts span [0, End]
	Nodes []NodeTimeline
}

// NodeTimeline is one node's load as a step function: Steps[i].Load holds
// from Steps[i].At until the next step; before the first it is 0.
type NodeTimeline struct {
	Name    string
	MaxLoad float64
	Steps   []Step
}

// Step is a node's load changing at a point in time.
type Step struct {
	At   time.Duration
	Load float64
}

func (s *sim) timeline() *Timeline {
	t := &Timeline{End: s.makespan()}
	for _, n := range s.nodeList {
		t.Nodes = append(t.Nodes, NodeTimeline{Name: n.spec.Name, MaxLoad: n.spec.MaxLoad, Steps: n.steps})
	}
	return t
}

// Buckets averages the node's load factor (load / max load) over width
// equal slices of [0, end].
func (n NodeTimeline) Buckets(end time.Duration, width int) []float64 {
	out := make([]float64, width)
	if end <= 0 || width <= 0 {
		return out
	}
	// Slice b is [bound(b), bound(b+1)), in whole nanoseconds, so every
	// step is cut at exact boundaries.
	bound := func(b int) time.Duration { return time.Duration(int64(end) * int64(b) / int64(width)) }
	b := 0
	for i, st := range n.Steps {
		from, until := min(st.At, end), end
		if i+1 < len(n.Steps) {
			until = min(n.Steps[i+1].At, end)
		}
		for b > 0 && bound(b) > from {
			b--
		}
		for from < until {
			for bound(b+1) <= from {
				b++
			}
			stop := min(bound(b+1), until)
			out[b] += st.Load * float64(stop-from)
			from = stop
		}
	}
	for i := range out {
		out[i] /= n.MaxLoad * float64(bound(i+1)-bound(i))
	}
	return out
}

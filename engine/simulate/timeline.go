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
	slice := float64(end) / float64(width)
	for i, st := range n.Steps {
		until := end
		if i+1 < len(n.Steps) {
			until = min(n.Steps[i+1].At, end)
		}
		from := float64(st.At)
		for from < float64(until) {
			b := min(int(from/slice), width-1)
			stop := min(float64(b+1)*slice, float64(until))
			if b == width-1 {
				stop = float64(until)
			}
			out[b] += st.Load * (stop - from) / slice
			from = stop
		}
	}
	for i := range out {
		out[i] /= n.MaxLoad
	}
	return out
}

package simulate

import (
	"time"

	"github.com/jobctl/jobctl/engine"
)

// ending is a running job's end, due at a point of simulated time.
type ending struct {
	at   time.Duration
	seq  uint64 // start order: equal times end in the order they started
	job  int32  // index into the workload
	run  *engine.Job
	node *simNode
}

// endings is a min-heap of endings by (at, seq). It is written out rather
// than built on container/heap because a million-job run pushes and pops
// every job once, and the interface calls would box each ending.
type endings []ending

func (h endings) less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].seq < h[j].seq)
}

func (h *endings) push(e ending) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *endings) pop() ending {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = ending{}
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// next is the time of the earliest ending; ok is false when none is due.
func (h endings) next() (time.Duration, bool) {
	if len(h) == 0 {
		return 0, false
	}
	return h[0].at, true
}

package placement

import (
	"sync"
)

// Decline reasons of the books beyond Accept's own.
const (
	ReasonNotReady = "not-ready" // not accepting work: starting, shutting down, in maintenance
)

// BookLimits are a node's configured limits.
type BookLimits struct {
	MaxLoad         float64
	MaxJobs         int // 0 means no limit
	AcceptExceeding bool
}

// Books are a node's own account of the work it has taken on: the load and
// count of the jobs it accepted and has not finished with, whether it takes
// work at all, and whether an operator holds it in maintenance. Take answers
// an offer with Accept against these figures and enters the job in the same
// step, so concurrent offers cannot together overcommit the node. The node
// runtime and the simulator keep their books with this one type.
//
// It is safe for concurrent use.
type Books struct {
	limits BookLimits

	mu          sync.Mutex
	ready       bool
	maintenance bool
	load        float64
	jobs        map[int64]float64 // job id → its load
	// waiting are the jobs of jobs that wait for their children: still
	// the node's (Holds, a second offer is declined), but their load and
	// count are off the books, as a WAITING job holds no load.
	waiting map[int64]bool
}

// NewBooks returns empty books; they take no work until SetReady(true).
func NewBooks(limits BookLimits) *Books {
	return &Books{limits: limits, jobs: map[int64]float64{}, waiting: map[int64]bool{}}
}

// Limits returns the limits the books were made with.
func (b *Books) Limits() BookLimits { return b.limits }

// SetReady switches taking work on or off (off before start and from a
// shutdown on).
func (b *Books) SetReady(on bool) {
	b.mu.Lock()
	b.ready = on
	b.mu.Unlock()
}

// Ready reports whether the books take work.
func (b *Books) Ready() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ready
}

// SetMaintenance mirrors the node's maintenance flag: a dispatcher that read
// the node list before the flag was set may still offer work, which is then
// declined.
func (b *Books) SetMaintenance(on bool) {
	b.mu.Lock()
	b.maintenance = on
	b.mu.Unlock()
}

// Take decides an offer of job id with the given load and, when it is
// accepted, enters the job. entered, if not nil, runs under the books' lock
// right after an accepted job is entered, so a caller can count the job
// (a WaitGroup a shutdown drains) before anyone else sees the books change.
func (b *Books) Take(id int64, load float64, entered func()) Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.ready:
		return Decision{Reason: ReasonNotReady, Detail: "not accepting work"}
	case b.maintenance:
		return Decision{Reason: ReasonNotReady + ": in maintenance", Detail: "in maintenance"}
	}
	if _, dup := b.jobs[id]; dup {
		// A run of this job taken from this node may still be stopping:
		// two runs of one job never overlap here.
		return Decision{Reason: ReasonNotReady + ": an earlier run of this job is still stopping",
			Detail: "an earlier run of this job is still stopping"}
	}
	d := Accept(AcceptInput{MaxLoad: b.limits.MaxLoad, Load: b.load, Running: len(b.jobs) - len(b.waiting),
		MaxJobs: b.limits.MaxJobs, JobLoad: load, AcceptExceeding: b.limits.AcceptExceeding})
	if !d.Accept {
		return d
	}
	b.jobs[id] = load
	b.load += load
	if entered != nil {
		entered()
	}
	return d
}

// Release removes a job from the books; it reports false for a job they do
// not hold.
func (b *Books) Release(id int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	load, ok := b.jobs[id]
	if !ok {
		return false
	}
	delete(b.jobs, id)
	if b.waiting[id] {
		delete(b.waiting, id)
	} else {
		b.load -= load
	}
	if len(b.jobs) == len(b.waiting) {
		b.load = 0 // no float drift once idle
	}
	return true
}

// SetWaiting takes the load and count of job id off the books while it
// waits for its children (on) and puts them back when it runs again (off);
// the job stays held either way. It reports false for a job the books do
// not hold. Putting a job back may take the books over their max load or
// max jobs for a while: its process never stopped, and no new work is
// taken until the books are under their limits again.
func (b *Books) SetWaiting(id int64, on bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	load, ok := b.jobs[id]
	if !ok {
		return false
	}
	switch {
	case on && !b.waiting[id]:
		b.waiting[id] = true
		b.load -= load
		if len(b.jobs) == len(b.waiting) {
			b.load = 0
		}
	case !on && b.waiting[id]:
		delete(b.waiting, id)
		b.load += load
	}
	return true
}

// Holds reports whether the books hold job id.
func (b *Books) Holds(id int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.jobs[id]
	return ok
}

// Held returns the ids of the jobs the books hold now, as Holds would
// answer for each.
func (b *Books) Held() map[int64]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	held := make(map[int64]bool, len(b.jobs))
	for id := range b.jobs {
		held[id] = true
	}
	return held
}

// Totals returns the load and the number of jobs on the books; jobs that
// wait for their children count in neither.
func (b *Books) Totals() (load float64, jobs int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.load, len(b.jobs) - len(b.waiting)
}

// Waiting returns the number of held jobs that wait for their children.
func (b *Books) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting)
}

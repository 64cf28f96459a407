package memstore

import (
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// ShareJobs makes the store hand out the jobs it stores rather than copies
// of them: every job a method returns (JobInsert, JobGet, JobList,
// JobUpdate, JobUpdateMany, JobListRollbackPending, JobRollbackSet) is then
// the store's own, which the caller must not change. It may keep it: a
// stored job is never changed in place, a transition stores a new one, so
// what the caller holds stays the job as it was when returned. For a caller
// that changes no job it reads, such as a simulation, whose million jobs
// are each inserted, started and ended, that saves a copy per call. Set it
// before the store is used.
func (s *Store) ShareJobs() { s.shareJobs = true }

// jobOut is a stored job as a method returns it: a copy, unless ShareJobs.
func (s *Store) jobOut(j *engine.Job) *engine.Job {
	if s.shareJobs {
		return j
	}
	return cloneJob(j)
}

// jobsOut is jobOut for many jobs, in a new slice.
func (s *Store) jobsOut(jobs []*engine.Job) []*engine.Job {
	if s.shareJobs {
		return jobs
	}
	return cloneJobs(jobs)
}

// jobCopy is a job copied out together with the values its time and
// number fields point to, so a copy costs one allocation, not one per
// field set. Every pointer of the copy still points to its own value: the
// caller may change any of them, or keep one alone.
type jobCopy struct {
	job                                   engine.Job
	runAfter, queued, started, finished   time.Time
	parent, keyPosition, rollback, rollOf int64
	exitCode                              int
}

// cloneJob is a deep copy: the caller may change any part of it.
func cloneJob(j *engine.Job) *engine.Job {
	box := &jobCopy{job: *j}
	c := &box.job
	c.Args = slices.Clone(j.Args)
	if c.Args == nil {
		c.Args = []string{}
	}
	c.Payload = slices.Clone(j.Payload)
	c.ParentID = copyInto(j.ParentID, &box.parent)
	c.RunAfter = copyInto(j.RunAfter, &box.runAfter)
	c.ExitCode = copyInto(j.ExitCode, &box.exitCode)
	c.Usage = clonePtr(j.Usage)
	c.QueuedAt = copyInto(j.QueuedAt, &box.queued)
	c.StartedAt = copyInto(j.StartedAt, &box.started)
	c.FinishedAt = copyInto(j.FinishedAt, &box.finished)
	c.KeyPosition = copyInto(j.KeyPosition, &box.keyPosition)
	c.RollbackJobID = copyInto(j.RollbackJobID, &box.rollback)
	c.RollbackOf = copyInto(j.RollbackOf, &box.rollOf)
	return c
}

// copyInto copies *p into slot and returns slot; nil stays nil.
func copyInto[T any](p *T, slot *T) *T {
	if p == nil {
		return nil
	}
	*slot = *p
	return slot
}

func cloneJobs(jobs []*engine.Job) []*engine.Job {
	out := make([]*engine.Job, len(jobs))
	for i, j := range jobs {
		out[i] = cloneJob(j)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneNode is a deep copy of a stored node.
func cloneNode(n *engine.Node) *engine.Node {
	c := *n
	c.Services = slices.Clone(n.Services)
	if c.Services == nil {
		c.Services = []engine.NodeService{}
	}
	c.RunningUsage = slices.Clone(n.RunningUsage)
	if c.RunningUsage == nil {
		c.RunningUsage = []engine.LiveUsage{}
	}
	if n.BeatMissedAt != nil {
		c.BeatMissedAt = engine.Ptr(*n.BeatMissedAt)
	}
	return &c
}

// nodeCopies deep-copies many nodes at once, in a few allocations for them
// all rather than a few for each: a dispatch round lists every node. Each
// copy's lists are capped at their own length, so appending to one copies
// it away rather than writing into the next node's.
type nodeCopies struct {
	nodes    []engine.Node
	services []engine.NodeService
	usage    []engine.LiveUsage
}

// reset empties cs and makes room for deep copies of stored, in the
// arrays it holds when they are large enough.
func (cs *nodeCopies) reset(stored []*engine.Node) {
	var services, usage int
	for _, n := range stored {
		services += len(n.Services)
		usage += len(n.RunningUsage)
	}
	cs.nodes = roomFor(cs.nodes, len(stored))
	cs.services = roomFor(cs.services, services)
	cs.usage = roomFor(cs.usage, usage)
}

// roomFor is s emptied when it holds n more, else a new slice that does:
// appending n never moves it, so the copies already handed out stay put.
func roomFor[T any](s []T, n int) []T {
	if s == nil || cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// clone is cloneNode out of the room made for it.
func (cs *nodeCopies) clone(n *engine.Node) *engine.Node {
	cs.nodes = append(cs.nodes, *n)
	c := &cs.nodes[len(cs.nodes)-1]
	from := len(cs.services)
	cs.services = append(cs.services, n.Services...)
	c.Services = cs.services[from:len(cs.services):len(cs.services)]
	from = len(cs.usage)
	cs.usage = append(cs.usage, n.RunningUsage...)
	c.RunningUsage = cs.usage[from:len(cs.usage):len(cs.usage)]
	if n.BeatMissedAt != nil {
		c.BeatMissedAt = engine.Ptr(*n.BeatMissedAt)
	}
	return c
}

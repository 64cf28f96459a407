package memstore

import (
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// cloneJob is a deep copy: the caller may change any part of it.
func cloneJob(j *engine.Job) *engine.Job {
	c := *j
	c.Args = slices.Clone(j.Args)
	if c.Args == nil {
		c.Args = []string{}
	}
	c.Payload = slices.Clone(j.Payload)
	c.ParentID = clonePtr(j.ParentID)
	c.RunAfter = clonePtr(j.RunAfter)
	c.ExitCode = clonePtr(j.ExitCode)
	c.Usage = clonePtr(j.Usage)
	c.QueuedAt = clonePtr(j.QueuedAt)
	c.StartedAt = clonePtr(j.StartedAt)
	c.FinishedAt = clonePtr(j.FinishedAt)
	c.KeyPosition = clonePtr(j.KeyPosition)
	c.RollbackJobID = clonePtr(j.RollbackJobID)
	c.RollbackOf = clonePtr(j.RollbackOf)
	return &c
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

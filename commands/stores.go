package commands

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// The stores the commands' helpers work on, each what one kind of helper
// needs of the store a command opened. Every engine.Store is each of them.

// jobReader reads jobs: listings, children, what a submit created.
type jobReader interface {
	JobGet(ctx context.Context, id int64) (*engine.Job, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
}

// nodeReader reads the nodes, and the database's clock that judges their
// silence.
type nodeReader interface {
	Now(ctx context.Context) (time.Time, error)
	NodeGet(ctx context.Context, name string) (*engine.Node, error)
	NodeList(ctx context.Context) ([]*engine.Node, error)
}

// eventReader reads the event log as it grows.
type eventReader interface {
	Now(ctx context.Context) (time.Time, error)
	EventList(ctx context.Context, p engine.EventListParams) ([]engine.Event, error)
}

// logReader reads a job's log.
type logReader interface {
	JobLogList(ctx context.Context, p engine.JobLogListParams) ([]engine.LogChunk, error)
}

// usageReader reads what the runs of each type measured.
type usageReader interface {
	JobAttemptUsageList(ctx context.Context, p engine.JobAttemptUsageParams) ([]engine.AttemptUsage, error)
}

// statsReader reads what stats sums up: the jobs by status, the nodes and
// what the runs measured.
type statsReader interface {
	nodeReader
	usageReader
	JobCountByStatus(ctx context.Context, p engine.JobListParams) (map[engine.Status]int, error)
}

// maintenanceStore sets a node's maintenance and drains it: the flag and
// its event, the node and its jobs to read, and the verbs that stop and
// requeue its jobs.
type maintenanceStore interface {
	engine.MaintenanceStore
	nodeReader
	jobReader
}

// nodeRemoveStore removes a node: the node and its jobs to read, and
// engine.RemoveNode.
type nodeRemoveStore interface {
	engine.NodeRemover
	nodeReader
	jobReader
}

// submitStore submits jobs and reads what it created.
type submitStore interface {
	engine.SubmitStore
	jobReader
}

package dispatch

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// The stores the dispatcher's parts work on, each what one part needs of
// the cluster's store. Every engine.Store is each of them.

// ClusterReader reads what a round, a housekeeping step and an
// explanation judge the cluster on: the nodes, the reservations, the jobs
// they keep and the jobs beside them (a key's, a parent's children).
type ClusterReader interface {
	Now(ctx context.Context) (time.Time, error)
	NodeList(ctx context.Context) ([]*engine.Node, error)
	ReservationList(ctx context.Context) ([]engine.Reservation, error)
	JobGet(ctx context.Context, id int64) (*engine.Job, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
}

// Store is what a Dispatcher needs: the cluster and its queues to read,
// the claims that place jobs, the nodes kept for oversized jobs and the
// type limits.
type Store interface {
	ClusterReader
	JobQueueLoads(ctx context.Context) ([]engine.QueueLoads, error)
	JobListDispatchable(ctx context.Context, p engine.JobDispatchableParams) ([]*engine.Job, error)
	JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error)
	ReservationSet(ctx context.Context, r engine.Reservation) error
	ReservationDelete(ctx context.Context, jobID int64) error
	TypeLimitList(ctx context.Context) ([]engine.TypeLimit, error)
}

// HousekeepingStore is what a Housekeeper needs: the cluster to read, the
// rollbacks to spawn, the jobs of silent nodes to recover, the children
// to repair and the stale reservations to drop.
type HousekeepingStore interface {
	ClusterReader
	engine.RollbackStore
	engine.RepairStore
	JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error)
	NodeGet(ctx context.Context, name string) (*engine.Node, error)
	ReservationDelete(ctx context.Context, jobID int64) error
}

// LeaseStore is what a LeaseHolder needs: the dispatcher lease.
type LeaseStore interface {
	LeaseAcquire(ctx context.Context, owner string, ttl time.Duration) (engine.LeaseTerm, error)
	LeaseRelease(ctx context.Context, owner string) (bool, error)
}

// MonitorStore is what a Monitor needs: the nodes and their health.
type MonitorStore interface {
	NodeList(ctx context.Context) ([]*engine.Node, error)
	NodeSetBeatMissed(ctx context.Context, name string, missed bool) error
	NodeSetState(ctx context.Context, name string, state engine.NodeState) error
}

// ExplainStore is what Explain needs: the cluster, the queue ahead of a
// job, the type limits and what the type's runs measured.
type ExplainStore interface {
	ClusterReader
	JobCountByStatus(ctx context.Context, p engine.JobListParams) (map[engine.Status]int, error)
	JobAttemptUsageList(ctx context.Context, p engine.JobAttemptUsageParams) ([]engine.AttemptUsage, error)
	TypeLimitList(ctx context.Context) ([]engine.TypeLimit, error)
}

package engine

import (
	"context"
	"fmt"
)

// MaintenanceStore is what MaintenanceSet needs of a store.
type MaintenanceStore interface {
	Transactor
	NodeGet(ctx context.Context, name string) (*Node, error)
}

// MaintenanceSet turns node name's maintenance flag on or off for by, and
// records it as verb (EventNodesMaintenance, or EventNodesDrain for a drain)
// in the same transaction. It returns the node as it was before; changed
// is false when the flag was already as asked, and then nothing is changed
// or recorded. An unknown name is a *NotFoundError.
func MaintenanceSet(ctx context.Context, s MaintenanceStore, name string, on bool, by Actor, verb string) (before *Node, changed bool, err error) {
	before, err = s.NodeGet(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if before.Maintenance == on {
		return before, false, nil
	}
	detail := "maintenance off"
	if on {
		detail = "maintenance on"
	}
	err = Recorded(ctx, s, by, EventAppendParams{Verb: verb, Node: name, Detail: detail}, func(tx TxStore, _ *EventAppendParams) error {
		return tx.NodeSetMaintenance(ctx, name, on)
	})
	return before, err == nil, err
}

// JobLister lists jobs (TxStore.JobList), in a transaction or not.
type JobLister interface {
	JobList(ctx context.Context, p JobListParams) ([]*Job, error)
}

// NodeBusyJobs returns the jobs that keep node busy (Job.KeepsNodeBusy),
// ordered by id: what a drain waits for.
func NodeBusyJobs(ctx context.Context, s JobLister, node string) ([]*Job, error) {
	jobs, err := s.JobList(ctx, JobListParams{Node: node, Statuses: RecoverableStatuses})
	if err != nil {
		return nil, fmt.Errorf("list the jobs of node %s: %w", node, err)
	}
	busy := jobs[:0]
	for _, j := range jobs {
		if j.KeepsNodeBusy() {
			busy = append(busy, j)
		}
	}
	return busy, nil
}

package tui

import (
	"context"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// Actions are what the dashboard's keys do to the cluster. They run inside
// commands, never in Update.
type Actions interface {
	// JobVerb applies an admin verb to a job, as 'jobctl cancel' and its
	// siblings do, and returns the job as it is now; reason goes into the
	// change's event, as their --reason does.
	JobVerb(ctx context.Context, id int64, verb engine.Verb, reason string) (*engine.Job, error)
	// NodeMaintenance sets or clears a node's maintenance flag.
	NodeMaintenance(ctx context.Context, name string, on bool, reason string) error
	// NodeDrain puts a node in maintenance and says how many jobs are still
	// active on it.
	NodeDrain(ctx context.Context, name string, reason string) (active int, err error)
	// Explain judges a job as the dispatcher would.
	Explain(ctx context.Context, id int64) (*dispatch.Explanation, error)
}

// ActionStore is what EngineActions need: the verbs' and maintenance's
// transactions, the node and its jobs to read, and what Explain reads.
type ActionStore interface {
	engine.MaintenanceStore
	dispatch.ExplainStore
}

// EngineActions are the Actions on a store, through the engine's own code.
// Every change is recorded with its event, naming Who (user@host) as the
// one who made it.
type EngineActions struct {
	Store ActionStore
	Who   string
}

func (a EngineActions) actor(reason string) engine.Actor {
	return engine.Actor{Who: a.Who, Reason: reason}
}

// JobVerb applies the verb with engine.ApplyVerb (so cancelling a job
// cancels its children, and a lost race is retried, never overwritten).
func (a EngineActions) JobVerb(ctx context.Context, id int64, verb engine.Verb, reason string) (*engine.Job, error) {
	return engine.ApplyVerb(ctx, a.Store, id, verb, a.actor(reason))
}

// NodeMaintenance sets the flag; setting it as it is already is no error.
func (a EngineActions) NodeMaintenance(ctx context.Context, name string, on bool, reason string) error {
	_, _, err := engine.MaintenanceSet(ctx, a.Store, name, on, a.actor(reason), engine.EventNodesMaintenance)
	return err
}

// NodeDrain puts the node in maintenance and counts the jobs that keep it
// busy (engine.Job.KeepsNodeBusy), as 'jobctl nodes drain' does.
func (a EngineActions) NodeDrain(ctx context.Context, name string, reason string) (int, error) {
	if _, _, err := engine.MaintenanceSet(ctx, a.Store, name, true, a.actor(reason), engine.EventNodesDrain); err != nil {
		return 0, err
	}
	busy, err := engine.NodeBusyJobs(ctx, a.Store, name)
	if err != nil {
		return 0, err
	}
	return len(busy), nil
}

// Explain runs the dispatcher's explanation with the default selector.
func (a EngineActions) Explain(ctx context.Context, id int64) (*dispatch.Explanation, error) {
	sel, err := placement.ParseSelector(placement.SelectorLoadFactor)
	if err != nil {
		return nil, err
	}
	return dispatch.Explain(ctx, a.Store, id, sel)
}

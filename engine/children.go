package engine

import "context"

// CancelChildrenOfRestart cancels the unfinished descendants of job when u
// takes a run of it back to the queue (a retry after a failure, its node
// gone, restarted or shut down): the next attempt runs from the start and
// submits its own children, and the old ones would run beside them for an
// attempt that is over. A workflow step is the exception: the jobs under a
// workflow belong to the whole workflow, and each is created once, so a
// step run again must find them as they are. Any other update needs
// nothing. It is the engine's doing, not an operator's: no event is
// recorded.
func CancelChildrenOfRestart(ctx context.Context, store Store, job *Job, u JobUpdate) error {
	if !u.From.NodeOwned() || u.To != StatusRestart || job.Type == TypeWorkflow {
		return nil
	}
	return cancelDescendants(ctx, store, u.ID, map[int64]bool{u.ID: true}, Actor{}, VerbEvent{Verb: string(VerbCancel)})
}

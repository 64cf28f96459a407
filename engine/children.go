package engine

import "context"

// CancelChildrenOfRestart cancels the unfinished descendants of a parent
// that u took from WAITING back to the queue (its node went away or shut
// down while it waited for them): its next attempt runs from the start and
// submits its own children, and the old ones would run beside them for a
// parent that no longer waits. Any other update needs nothing.
func CancelChildrenOfRestart(ctx context.Context, store Store, u JobUpdate) error {
	if u.From != StatusWaiting || u.To != StatusRestart {
		return nil
	}
	return cancelDescendants(ctx, store, u.ID, map[int64]bool{u.ID: true})
}

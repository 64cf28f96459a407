package dispatch

import (
	"context"
	"time"
)

// SetBatching replaces a retainer's batch size and the wait between its
// batches, so tests see batches without waiting.
func (r *Retainer) SetBatching(batch int, sleep func(ctx context.Context, d time.Duration) bool) {
	r.batch, r.sleep = batch, sleep
}

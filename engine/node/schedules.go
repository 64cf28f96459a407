package node

import (
	"context"
	"time"

	"github.com/jobctl/jobctl/engine/schedule"
)

// scheduleLoop fires due schedules while this node holds the lease. It
// sleeps until the next fire time, but never longer than a dispatch
// interval, so a schedule added or resumed meanwhile, or a lease taken
// over, is noticed within one.
func (s *leaseServices) scheduleLoop(ctx context.Context) {
	firer := schedule.NewFirer(s.store, s.log)
	longest := s.cfg.DispatchInterval
	repeat(ctx, func() time.Duration {
		if !s.holder.Trusted() {
			return min(longest, 250*time.Millisecond)
		}
		if _, err := firer.Fire(ctx, s.holder.Trusted); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("firing schedules failed", "err", err)
			}
			// A schedule that cannot fire stays due: try it again an
			// interval later, not at once.
			return longest
		}
		wait, ok, err := firer.Wait(ctx)
		if err != nil || !ok {
			return longest
		}
		// A little past the fire time, so the database clock has surely
		// reached it.
		return min(wait+5*time.Millisecond, longest)
	})
}

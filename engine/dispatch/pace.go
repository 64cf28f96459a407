package dispatch

import "time"

// QuickRound is the pause before the next round when the last one placed
// work: nodes that finish short jobs within a round have room again at once,
// and waiting a whole interval would cap throughput at one round's worth of
// capacity per interval.
const QuickRound = 50 * time.Millisecond

// NextRound is how long the lease holder waits after a round before the
// next: QuickRound after a round that placed work, else the dispatch
// interval. The node's loop and the simulator both pace rounds with it.
func NextRound(stats RoundStats, interval time.Duration) time.Duration {
	if stats.Dispatched > 0 {
		return min(QuickRound, interval)
	}
	return interval
}

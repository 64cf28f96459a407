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

// WakeGap is how long after a round a wake-up (a job queued, capacity
// freed) may start the next one early. Zero, unless nodes declined or did
// not answer: then their books are fuller than the store says, and the
// jobs put back would wake the dispatcher at once, again and again, so the
// next round waits at least QuickRound.
func WakeGap(stats RoundStats, interval time.Duration) time.Duration {
	if stats.Waiting[WaitDeclined]+stats.Waiting[WaitUnreachable] > 0 {
		return min(QuickRound, interval)
	}
	return 0
}

package dispatch

import (
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// DefaultSummaryInterval is how often an unchanged summary of waiting jobs
// is logged again.
const DefaultSummaryInterval = time.Minute

// SummaryLog logs RoundStats.Summary at info level, so dispatch never stops
// silently, yet a queue that waits for the same reason round after round
// says so once per interval, not every round: a summary is logged when it
// differs from the last one logged or the interval has passed on the clock.
// It is safe for concurrent use.
type SummaryLog struct {
	log      *slog.Logger
	clock    engine.Clock
	interval time.Duration

	mu   sync.Mutex
	last string
	at   time.Time
}

// NewSummaryLog returns a summary log writing to log, timed by clock.
func NewSummaryLog(log *slog.Logger, clock engine.Clock, interval time.Duration) *SummaryLog {
	return &SummaryLog{log: log, clock: clock, interval: interval}
}

// Log logs the round's summary if it is due; it reports whether it did.
func (l *SummaryLog) Log(s RoundStats) bool {
	sum := s.Summary()
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if sum == l.last && (sum == "" || now.Sub(l.at) < l.interval) {
		return false
	}
	was := l.last
	l.last, l.at = sum, now
	if sum == "" {
		l.log.Info("no job waits any more", "before", was)
		return true
	}
	l.log.Info("dispatch: "+sum, "waiting", s.Waited(), "dispatched", s.Dispatched)
	return true
}

package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// LeaseHolder acquires and renews the dispatcher lease for one owner and
// knows how long it may trust it. The database decides who holds the lease
// (on its own clock); the holder's trust ends a margin before the earliest
// moment the lease could expire, measured on the local clock from the start
// of the renewal, so a holder that cannot renew stops dispatching before a
// successor can take over.
type LeaseHolder struct {
	store  LeaseStore
	owner  string
	ttl    time.Duration
	margin time.Duration
	clock  engine.Clock
	log    *slog.Logger

	mu         sync.Mutex
	trustUntil time.Time
	renewedAt  time.Time // start of the last renewal that held
	held       bool
	term       engine.LeaseTerm // the term held; zero when not held
}

// NewLeaseHolder returns a holder for owner. The TTL must exceed the margin;
// a margin of a third of the TTL leaves room for clock drift and slow renewals.
func NewLeaseHolder(store LeaseStore, owner string, ttl time.Duration, clock engine.Clock, log *slog.Logger) *LeaseHolder {
	return &LeaseHolder{store: store, owner: owner, ttl: ttl, margin: ttl / 3, clock: clock, log: log}
}

// Renew tries to acquire or renew the lease and reports whether this owner
// holds it. The attempt is bounded by the trust window, so an exhausted
// connection pool or a hung database cannot keep a stale holder trusting.
func (h *LeaseHolder) Renew(ctx context.Context) bool {
	start := h.clock.Now()
	bounded, cancel := context.WithTimeout(ctx, h.ttl-h.margin)
	defer cancel()
	term, err := h.store.LeaseAcquire(bounded, h.owner, h.ttl)

	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.held
	switch {
	case err != nil:
		// Keep whatever trust is left from the last renewal: it was
		// measured so that it ends before the lease can have expired. A
		// caller that gave up (the node stopping) is no failure to warn of.
		if ctx.Err() == nil {
			h.log.Warn("lease renewal failed", "err", err)
		}
		h.held = h.clock.Now().Before(h.trustUntil)
	case term.Held():
		h.trustUntil = start.Add(h.ttl - h.margin)
		h.renewedAt = start
		h.held = true
		if term.Term != h.term.Term {
			h.log.Info("lease term begins", "term", term.Term)
		}
		h.term = term
	default:
		h.trustUntil, h.renewedAt = time.Time{}, time.Time{}
		h.held = false
	}
	if !h.held {
		h.term = engine.LeaseTerm{}
	}
	if h.held != was {
		if h.held {
			h.log.Info("acquired the dispatcher lease", "ttl", h.ttl, "term", h.term.Term)
		} else {
			h.log.Info("lost the dispatcher lease")
		}
	}
	return h.held
}

// RenewIfDue is Renew for a holder that renews more often than it must:
// while the lease is held and its last renewal started less than every
// ago, it trusts that renewal and writes nothing. Rounds woken by job
// changes come many times a second, and a renewal is a write the database
// must flush before the round can go on; the trust window still ends, as
// always, a margin before the lease could have expired.
func (h *LeaseHolder) RenewIfDue(ctx context.Context, every time.Duration) bool {
	h.mu.Lock()
	now := h.clock.Now()
	fresh := h.held && now.Before(h.renewedAt.Add(every)) && now.Before(h.trustUntil)
	h.mu.Unlock()
	if fresh {
		return true
	}
	return h.Renew(ctx)
}

// Trusted reports whether this owner may dispatch now.
func (h *LeaseHolder) Trusted() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held && h.clock.Now().Before(h.trustUntil)
}

// Term is the lease term held, the zero LeaseTerm when none is.
func (h *LeaseHolder) Term() engine.LeaseTerm {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.term
}

// Release gives the lease up so another candidate takes over at once.
func (h *LeaseHolder) Release(ctx context.Context) error {
	h.mu.Lock()
	h.held = false
	h.trustUntil, h.renewedAt = time.Time{}, time.Time{}
	h.term = engine.LeaseTerm{}
	h.mu.Unlock()
	_, err := h.store.LeaseRelease(ctx, h.owner)
	return err
}

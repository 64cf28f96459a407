package dispatch_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

func TestLeaseHolderTrustsOnlyWithinTheWindowOfItsLastRenewal(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	clock := &fixedClock{now: time.Unix(1_000_000, 0)}
	ttl := 30 * time.Second
	a := dispatch.NewLeaseHolder(s, "a", ttl, clock, quietLog())
	b := dispatch.NewLeaseHolder(s, "b", ttl, clock, quietLog())
	ctx := context.Background()

	if !a.Renew(ctx) || !a.Trusted() {
		t.Fatal("the first candidate did not acquire a free lease")
	}
	if b.Renew(ctx) || b.Trusted() {
		t.Fatal("a second candidate acquired a held lease")
	}
	// Trust ends a margin before the TTL, on the local clock, from the start of the renewal.
	clock.Advance(ttl - ttl/3 - time.Millisecond)
	if !a.Trusted() {
		t.Fatal("holder stopped trusting its lease inside the window")
	}
	clock.Advance(2 * time.Millisecond)
	if a.Trusted() {
		t.Fatal("holder still trusts its lease past renewal start + TTL - margin")
	}
	if !a.Renew(ctx) || !a.Trusted() {
		t.Fatal("holder could not renew")
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Trusted() {
		t.Fatal("holder trusts a released lease")
	}
	if !b.Renew(ctx) {
		t.Fatal("a candidate could not take a released lease at once")
	}
	if a.Renew(ctx) {
		t.Fatal("the former holder took the lease back from a live holder")
	}
}

func TestLeaseHolderStopsTrustingWhenTheDatabaseCannotBeReached(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	clock := &fixedClock{now: time.Unix(1_000_000, 0)}
	h := dispatch.NewLeaseHolder(s, "a", 30*time.Second, clock, quietLog())
	if !h.Renew(context.Background()) {
		t.Fatal("no lease")
	}
	s.Close()
	if !h.Renew(context.Background()) {
		t.Fatal("a failed renewal inside the window dropped trust that is still valid")
	}
	clock.Advance(25 * time.Second)
	if h.Renew(context.Background()) || h.Trusted() {
		t.Fatal("holder kept trusting past its window while renewals fail")
	}
}

// A renewal its caller gave up on (a node stopping) is not logged as a
// failure; one the database failed is.
func TestLeaseHolderWarnsOfFailedRenewalsOnly(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	var log bytes.Buffer
	h := dispatch.NewLeaseHolder(s, "a", 30*time.Second, &fixedClock{now: time.Unix(1_000_000, 0)},
		slog.New(slog.NewTextHandler(&log, nil)))
	stopping, cancel := context.WithCancel(context.Background())
	cancel()
	if h.Renew(stopping) {
		t.Fatal("a renewal under a cancelled context took the lease")
	}
	if strings.Contains(log.String(), "lease renewal failed") {
		t.Errorf("a renewal its caller gave up on was logged as a failure:\n%s", log.String())
	}
	s.Close()
	h.Renew(context.Background())
	if !strings.Contains(log.String(), "lease renewal failed") {
		t.Errorf("a renewal the database failed was not logged:\n%s", log.String())
	}
}

// leaseWrites is a lease store that counts the renewals that reach store.
type leaseWrites struct {
	store dispatch.LeaseStore
	n     int
}

func (s *leaseWrites) LeaseAcquire(ctx context.Context, owner string, ttl time.Duration) (engine.LeaseTerm, error) {
	s.n++
	return s.store.LeaseAcquire(ctx, owner, ttl)
}

func (s *leaseWrites) LeaseRelease(ctx context.Context, owner string) (bool, error) {
	return s.store.LeaseRelease(ctx, owner)
}

func TestLeaseHolderRenewsWhenDueOnly(t *testing.T) {
	t.Parallel()
	s := &leaseWrites{store: newStore(t)}
	clock := &fixedClock{now: time.Unix(1_000_000, 0)}
	h := dispatch.NewLeaseHolder(s, "a", 30*time.Second, clock, quietLog())
	ctx := context.Background()
	every := time.Second

	if !h.RenewIfDue(ctx, every) || s.n != 1 {
		t.Fatalf("a lease not held yet must be acquired: held %v after %d writes", h.Trusted(), s.n)
	}
	clock.Advance(every - time.Millisecond)
	if !h.RenewIfDue(ctx, every) || s.n != 1 {
		t.Fatalf("within %s of the last renewal: held %v after %d writes, want 1", every, h.Trusted(), s.n)
	}
	clock.Advance(time.Millisecond)
	if !h.RenewIfDue(ctx, every) || s.n != 2 {
		t.Fatalf("%s after the last renewal: held %v after %d writes, want 2", every, h.Trusted(), s.n)
	}
	// A window longer than the trust does not stretch it.
	clock.Advance(20*time.Second + time.Millisecond)
	if h.Trusted() {
		t.Fatal("holder trusts its lease past its window")
	}
	if !h.RenewIfDue(ctx, time.Hour) || s.n != 3 {
		t.Fatalf("past the trust window: held %v after %d writes, want a renewal", h.Trusted(), s.n)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if !h.RenewIfDue(ctx, time.Hour) || s.n != 4 {
		t.Fatalf("after a release: held %v after %d writes, want a renewal", h.Trusted(), s.n)
	}
}

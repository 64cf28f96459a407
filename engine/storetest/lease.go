package storetest

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var leaseTests = []subtest{
	{"LeaseElection", testLeaseElection},
	{"LeaseExpiry", testLeaseExpiry},
	{"LeaseRelease", testLeaseRelease},
	{"LeaseInvalidArgs", testLeaseInvalidArgs},
}

func acquire(t *testing.T, s engine.Store, owner string, ttl time.Duration) bool {
	t.Helper()
	ok, err := s.LeaseAcquire(t.Context(), owner, ttl)
	if err != nil {
		t.Fatalf("LeaseAcquire(%s): %v", owner, err)
	}
	return ok
}

func release(t *testing.T, s engine.Store, owner string) bool {
	t.Helper()
	ok, err := s.LeaseRelease(t.Context(), owner)
	if err != nil {
		t.Fatalf("LeaseRelease(%q): %v", owner, err)
	}
	return ok
}

func lease(t *testing.T, s engine.Store) engine.Lease {
	t.Helper()
	l, err := s.LeaseGet(t.Context())
	if err != nil {
		t.Fatalf("LeaseGet: %v", err)
	}
	return l
}

func wantHolder(t *testing.T, s engine.Store, what, owner string) engine.Lease {
	t.Helper()
	l := lease(t, s)
	if owner == "" {
		if l.Valid() {
			t.Errorf("%s: %s holds the lease until %s, want nobody", what, l.Owner, l.ExpiresAt)
		}
		return l
	}
	if l.Owner != owner || !l.Valid() {
		t.Errorf("%s: lease owner %q valid %v (expires %s, now %s), want held by %s", what, l.Owner, l.Valid(), l.ExpiresAt, l.Now, owner)
	}
	return l
}

// testLeaseElection: of three fresh candidates only the first acquires, and
// the holder keeps renewing while the others keep failing.
func testLeaseElection(t *testing.T, s engine.Store) {
	const ttl = 5 * time.Second // long enough that no stall on a busy machine lets it lapse
	wantHolder(t, s, "fresh store", "")
	if !acquire(t, s, "a", ttl) {
		t.Fatal("first candidate did not acquire a free lease")
	}
	for _, other := range []string{"b", "c"} {
		if acquire(t, s, other, ttl) {
			t.Fatalf("%s acquired the lease a holds", other)
		}
	}
	prev := wantHolder(t, s, "after the first round", "a")
	wantUTC(t, "ExpiresAt", prev.ExpiresAt)
	wantUTC(t, "lease Now", prev.Now)
	if r := prev.Remaining(); r <= 0 || r > ttl {
		t.Errorf("Remaining = %s, want within (0, %s]", r, ttl)
	}
	for round := 2; round <= 6; round++ {
		if !acquire(t, s, "a", ttl) {
			t.Fatalf("round %d: the holder could not renew", round)
		}
		for _, other := range []string{"b", "c"} {
			if acquire(t, s, other, ttl) {
				t.Fatalf("round %d: %s took the lease from its holder", round, other)
			}
		}
		l := wantHolder(t, s, "renewed", "a")
		if l.ExpiresAt.Before(prev.ExpiresAt) {
			t.Errorf("round %d: renewal moved expiry back from %s to %s", round, prev.ExpiresAt, l.ExpiresAt)
		}
		prev = l
	}
}

// testLeaseExpiry: a holder that stops renewing loses the lease once the TTL
// has passed on the database clock; a successor takes it and the old holder
// can no longer renew.
func testLeaseExpiry(t *testing.T, s engine.Store) {
	const shortTTL = 300 * time.Millisecond
	if !acquire(t, s, "a", shortTTL) {
		t.Fatal("a did not acquire a free lease")
	}
	l := wantHolder(t, s, "acquired", "a")
	if acquire(t, s, "b", time.Minute) {
		t.Fatal("b acquired before a's lease expired")
	}
	waitDBClockPast(t, s, l.ExpiresAt)
	wantHolder(t, s, "expired", "")
	if !acquire(t, s, "b", time.Minute) {
		t.Fatal("b did not acquire the expired lease")
	}
	if acquire(t, s, "a", shortTTL) {
		t.Fatal("the old holder renewed a lease its successor holds")
	}
	wantHolder(t, s, "after the takeover", "b")
}

// testLeaseRelease: a clean shutdown hands over at once; nobody else can
// release a lease they do not hold, except the operator.
func testLeaseRelease(t *testing.T, s engine.Store) {
	if release(t, s, "") {
		t.Error("operator release of a free lease reported a change")
	}
	if !acquire(t, s, "a", time.Minute) {
		t.Fatal("a did not acquire a free lease")
	}
	if release(t, s, "b") {
		t.Error("a non-holder's release reported a change")
	}
	wantHolder(t, s, "after a non-holder's release", "a")

	if !release(t, s, "a") {
		t.Error("the holder's release reported no change")
	}
	l := wantHolder(t, s, "after release", "")
	if l.Owner != "" {
		t.Errorf("owner after release = %q, want none", l.Owner)
	}
	if !acquire(t, s, "b", time.Minute) {
		t.Fatal("a successor could not acquire a released lease at once")
	}
	if release(t, s, "a") {
		t.Error("the former holder released its successor's lease")
	}
	wantHolder(t, s, "after the former holder's release", "b")

	// Operator override: release whoever holds it.
	if !release(t, s, "") {
		t.Error("operator release reported no change")
	}
	wantHolder(t, s, "after operator release", "")
	if !acquire(t, s, "c", time.Minute) {
		t.Fatal("c could not acquire after the operator's release")
	}
	wantHolder(t, s, "after c acquired", "c")
}

func testLeaseInvalidArgs(t *testing.T, s engine.Store) {
	if ok, err := s.LeaseAcquire(t.Context(), "a", 0); err == nil || ok {
		t.Errorf("LeaseAcquire with ttl 0 = %v, %v; want an error", ok, err)
	}
	if ok, err := s.LeaseAcquire(t.Context(), "", time.Minute); err == nil || ok {
		t.Errorf("LeaseAcquire without owner = %v, %v; want an error", ok, err)
	}
	wantHolder(t, s, "after refused acquisitions", "")
}

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
	{"LeaseTerms", testLeaseTerms},
	{"LeaseTermGuardsStart", testLeaseTermGuardsStart},
}

func acquire(t *testing.T, s engine.Store, owner string, ttl time.Duration) bool {
	t.Helper()
	return acquireTerm(t, s, owner, ttl).Held()
}

func acquireTerm(t *testing.T, s engine.Store, owner string, ttl time.Duration) engine.LeaseTerm {
	t.Helper()
	term, err := s.LeaseAcquire(t.Context(), owner, ttl)
	if err != nil {
		t.Fatalf("LeaseAcquire(%s): %v", owner, err)
	}
	if term.Held() && term.Owner != owner {
		t.Fatalf("LeaseAcquire(%s) returned a term of %q", owner, term.Owner)
	}
	return term
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
	if term, err := s.LeaseAcquire(t.Context(), "a", 0); err == nil || term.Held() {
		t.Errorf("LeaseAcquire with ttl 0 = %v, %v; want an error", term, err)
	}
	if term, err := s.LeaseAcquire(t.Context(), "", time.Minute); err == nil || term.Held() {
		t.Errorf("LeaseAcquire without owner = %v, %v; want an error", term, err)
	}
	wantHolder(t, s, "after refused acquisitions", "")
}

// testLeaseTerms: a renewal keeps the term and its start; a taking after a
// release or an expiry, by the same owner or another, starts a new term,
// and LeaseGet shows the term of the holder.
func testLeaseTerms(t *testing.T, s engine.Store) {
	before := dbNow(t, s)
	first := acquireTerm(t, s, "a", time.Minute)
	if !first.Held() {
		t.Fatal("a did not acquire a free lease")
	}
	if first.AcquiredAt.Before(before.Add(-time.Second)) || first.AcquiredAt.After(dbNow(t, s).Add(time.Second)) {
		t.Errorf("term acquired at %s, want about the database's now %s", first.AcquiredAt, before)
	}
	wantUTC(t, "AcquiredAt", first.AcquiredAt)
	renewed := acquireTerm(t, s, "a", time.Minute)
	if renewed.Term != first.Term || !renewed.AcquiredAt.Equal(first.AcquiredAt) {
		t.Errorf("renewal gave term %d from %s, want term %d from %s kept", renewed.Term, renewed.AcquiredAt, first.Term, first.AcquiredAt)
	}
	if other := acquireTerm(t, s, "b", time.Minute); other.Held() {
		t.Fatalf("b got term %d of a held lease", other.Term)
	}
	if l := lease(t, s); l.Term != first.Term || !l.AcquiredAt.Equal(first.AcquiredAt) {
		t.Errorf("LeaseGet shows term %d from %s, want %d from %s", l.Term, l.AcquiredAt, first.Term, first.AcquiredAt)
	}
	release(t, s, "a")
	again := acquireTerm(t, s, "a", time.Minute)
	if again.Term <= first.Term {
		t.Errorf("a taking its released lease again got term %d, want above %d", again.Term, first.Term)
	}
	release(t, s, "a")
	b := acquireTerm(t, s, "b", 300*time.Millisecond)
	if b.Term <= again.Term {
		t.Errorf("b taking the released lease got term %d, want above %d", b.Term, again.Term)
	}
	waitDBClockPast(t, s, lease(t, s).ExpiresAt)
	late := acquireTerm(t, s, "b", time.Minute)
	if late.Term <= b.Term {
		t.Errorf("b renewing after its lease expired got term %d, want a new term above %d", late.Term, b.Term)
	}
	if l := lease(t, s); l.Term != late.Term || l.Owner != "b" {
		t.Errorf("LeaseGet shows %s term %d, want b term %d", l.Owner, l.Term, late.Term)
	}
}

// testLeaseTermGuardsStart: a start under a lease term applies only while
// that term is the owner's current, unexpired lease, records dispatcher and
// term on the job, and a refused start leaves the job as it was, alone and
// in a batch.
func testLeaseTermGuardsStart(t *testing.T, s engine.Store) {
	ctx := t.Context()
	a := acquireTerm(t, s, "a", time.Minute)
	if !a.Held() {
		t.Fatal("a did not acquire a free lease")
	}
	startUnder := func(j *engine.Job, term engine.LeaseTerm) engine.JobUpdate {
		u := engine.QueuedStartUpdate(j, "n1")
		u.StartedUnder = &term
		return u
	}
	j1, j2, j3 := queued(t, s, 1), queued(t, s, 1), queued(t, s, 1)
	started, err := s.JobUpdate(ctx, startUnder(j1, a))
	if err != nil {
		t.Fatalf("start under the current term: %v", err)
	}
	if started.Dispatcher != "a" || started.LeaseTerm != a.Term || started.Status != engine.StatusRunning {
		t.Errorf("started job: %s dispatcher %q term %d, want RUNNING under a term %d", started.Status, started.Dispatcher, started.LeaseTerm, a.Term)
	}
	if got := get(t, s, j1.ID); got.Dispatcher != "a" || got.LeaseTerm != a.Term {
		t.Errorf("stored job: dispatcher %q term %d, want a term %d", got.Dispatcher, got.LeaseTerm, a.Term)
	}
	stale := a
	stale.Term++
	_, err = s.JobUpdate(ctx, startUnder(j2, stale))
	wantErrIs(t, "start under a term that is not current", err, engine.ErrConflict)
	notA := engine.LeaseTerm{Owner: "b", Term: a.Term}
	res, err := s.JobUpdateMany(ctx, []engine.JobUpdate{startUnder(j2, notA), startUnder(j3, a)})
	if err != nil {
		t.Fatalf("JobUpdateMany: %v", err)
	}
	wantErrIs(t, "batched start under another owner's term", res[0].Err, engine.ErrConflict)
	if res[1].Err != nil || res[1].Job.Dispatcher != "a" || res[1].Job.LeaseTerm != a.Term {
		t.Errorf("batched start under the current term: %+v", res[1])
	}
	if got := get(t, s, j2.ID); got.Status != engine.StatusQueued || got.Version != j2.Version || got.Dispatcher != "" {
		t.Errorf("refused start changed the job: %s v%d dispatcher %q", got.Status, got.Version, got.Dispatcher)
	}
	release(t, s, "a")
	quiet, err := s.JobUpdateManyQuiet(ctx, []engine.JobUpdate{startUnder(j2, a)})
	if err != nil {
		t.Fatalf("JobUpdateManyQuiet: %v", err)
	}
	wantErrIs(t, "start under a released term", quiet[0].Err, engine.ErrConflict)
	// A plain start, without a term, is not guarded.
	if _, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(j2, "n1")); err != nil {
		t.Errorf("start without a term: %v", err)
	}
}

package dbstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// LeaseAcquire acquires or renews the dispatcher lease for owner until the
// database's now + ttl, with one conditional UPDATE judged on the
// database's clock, so candidates on machines with skewed clocks still
// agree on who holds it. It reports whether owner holds the lease now. The
// lease is free when it has expired or was released.
func (s *Store) LeaseAcquire(ctx context.Context, owner string, ttl time.Duration) (bool, error) {
	if err := engine.ValidateLeaseAcquire(owner, ttl); err != nil {
		return false, err
	}
	pool, err := s.leasePool()
	if err != nil {
		return false, fmt.Errorf("acquire lease for %s: %w", owner, err)
	}
	n, err := s.exec(ctx, pool, qLeaseAcquire, args{"owner": owner, "ttl_seconds": ttl.Seconds()})
	if err != nil {
		return false, fmt.Errorf("acquire lease for %s: %w", owner, err)
	}
	return n == 1, nil
}

// LeaseRelease gives the lease up (owner none, expiring now) if owner holds
// it, so a successor takes over at once. An empty owner releases it whoever
// holds it (operator override). It reports whether anything changed.
func (s *Store) LeaseRelease(ctx context.Context, owner string) (bool, error) {
	pool, err := s.leasePool()
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	n, err := s.exec(ctx, pool, qLeaseRelease, args{"owner": owner})
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	return n == 1, nil
}

// LeaseGet reads the lease together with the database's clock.
func (s *Store) LeaseGet(ctx context.Context) (engine.Lease, error) {
	var row leaseRow
	if err := s.get(ctx, s.q, &row, qLeaseGet, nil); err != nil {
		if isNoRows(err) {
			return engine.Lease{}, fmt.Errorf("read lease: the lease row is missing; run `jobctl db migrate`")
		}
		return engine.Lease{}, fmt.Errorf("read lease: %w", err)
	}
	return engine.Lease{Owner: row.Owner, ExpiresAt: row.ExpiresAt.Time, Now: row.Now.Time}, nil
}

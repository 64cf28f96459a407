package memstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// LeaseAcquire takes or renews the lease for owner until now + ttl, when
// owner holds it already or it is free (released or expired).
// A renewal (owner's own lease, not expired) keeps the term; any other
// taking starts a new one.
func (s *Store) LeaseAcquire(_ context.Context, owner string, ttl time.Duration) (engine.LeaseTerm, error) {
	if err := engine.ValidateLeaseAcquire(owner, ttl); err != nil {
		return engine.LeaseTerm{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.lease.Owner != owner && s.lease.Owner != "" && !s.lease.ExpiresAt.Before(now) {
		return engine.LeaseTerm{}, nil
	}
	if s.lease.Owner != owner || s.lease.ExpiresAt.Before(now) {
		s.lease.Term++
		s.lease.AcquiredAt = now
	}
	s.lease.Owner, s.lease.ExpiresAt = owner, now.Add(ttl)
	return engine.LeaseTerm{Owner: owner, Term: s.lease.Term, AcquiredAt: s.lease.AcquiredAt}, nil
}

// termCurrent reports whether t is the current, unexpired lease of its
// owner at now; the lock is held.
func (s *Store) termCurrent(t engine.LeaseTerm, now time.Time) bool {
	return s.lease.Owner == t.Owner && s.lease.Term == t.Term && s.lease.ExpiresAt.After(now)
}

// LeaseRelease frees the lease if owner holds it, or whoever holds it for
// an empty owner; it reports whether anything changed.
func (s *Store) LeaseRelease(ctx context.Context, owner string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.LeaseRelease(ctx, owner)
}

// LeaseRelease frees the lease if owner holds it, or whoever holds it for
// an empty owner; it reports whether anything changed.
func (tx *txStore) LeaseRelease(_ context.Context, owner string) (bool, error) {
	if err := tx.check(); err != nil {
		return false, err
	}
	s := tx.s
	if s.lease.Owner == "" || (owner != "" && s.lease.Owner != owner) {
		return false, nil
	}
	was := s.lease
	s.lease.Owner, s.lease.ExpiresAt = "", s.now()
	tx.onUndo(func() { s.lease = was })
	return true, nil
}

// LeaseGet reads the lease with the store's clock.
func (s *Store) LeaseGet(context.Context) (engine.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lease
	l.Now = s.now()
	return l, nil
}

// ClusterToken returns the cluster's dispatch token, 32 random bytes in
// hex, made on first use.
func (s *Store) ClusterToken(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == "" {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return "", fmt.Errorf("generate cluster token: %w", err)
		}
		s.token = hex.EncodeToString(raw)
	}
	return s.token, nil
}

package dbstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// LeaseAcquire acquires or renews the dispatcher lease for owner until the
// database's now + ttl, with one conditional UPDATE judged on the
// database's clock, so candidates on machines with skewed clocks still
// agree on who holds it. It returns the term owner holds now, zero when
// another holds the lease. The lease is free when it has expired or was
// released. Where UPDATE returns no rows (MySQL) the term is read back in
// the same transaction.
func (s *Store) LeaseAcquire(ctx context.Context, owner string, ttl time.Duration) (engine.LeaseTerm, error) {
	if err := engine.ValidateLeaseAcquire(owner, ttl); err != nil {
		return engine.LeaseTerm{}, err
	}
	link, release, err := s.controlConn(ctx)
	if err != nil {
		return engine.LeaseTerm{}, fmt.Errorf("acquire lease for %s: %w", owner, err)
	}
	defer release()
	a := args{"owner": owner, "ttl_seconds": ttl.Seconds()}
	var rows []leaseTermRow
	if s.dialect.updateReturns {
		err = func() error {
			defer s.writing(true)()
			return s.selectRows(ctx, link, &rows, qLeaseAcquire, a, false)
		}()
	} else {
		err = runTx(ctx, link, func(tx *sqlx.Tx) error {
			n, err := s.exec(ctx, tx, qLeaseAcquire, a)
			if err != nil || n == 0 {
				return err
			}
			return s.selectRows(ctx, tx, &rows, qLeaseTermGet, nil, false)
		})
	}
	if err != nil {
		return engine.LeaseTerm{}, fmt.Errorf("acquire lease for %s: %w", owner, err)
	}
	if len(rows) == 0 {
		return engine.LeaseTerm{}, nil
	}
	return engine.LeaseTerm{Owner: owner, Term: rows[0].Term, AcquiredAt: rows[0].AcquiredAt.Time}, nil
}

// LeaseRelease gives the lease up (owner none, expiring now) if owner holds
// it, so a successor takes over at once. An empty owner releases it whoever
// holds it (operator override). It reports whether anything changed.
func (s *Store) LeaseRelease(ctx context.Context, owner string) (bool, error) {
	// In a transaction (an operator's release, recorded with its event)
	// the transaction's connection does it; else a control connection
	// (controlConn), ahead of queued work.
	var (
		n   int64
		err error
	)
	if s.tx != nil {
		n, err = s.exec(ctx, s.q, qLeaseRelease, args{"owner": owner})
	} else {
		link, release, cerr := s.controlConn(ctx)
		if cerr != nil {
			return false, fmt.Errorf("release lease: %w", cerr)
		}
		n, err = s.execUrgent(ctx, link, qLeaseRelease, args{"owner": owner})
		release()
	}
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
	return engine.Lease{Owner: row.Owner, ExpiresAt: row.ExpiresAt.Time, Term: row.Term,
		AcquiredAt: row.AcquiredAt.Time, Now: row.Now.Time}, nil
}

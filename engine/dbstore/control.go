package dbstore

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// controlPool returns the control connection: a pool of one connection of
// its own, opened on first use (most commands never need it), that carries
// only a node's liveness writes (NodeTouch) and the lease's statements
// (LeaseAcquire, LeaseRelease). Each is one short statement on one row, so
// none waits for long behind another; and none ever waits for a connection
// behind job work, which may fill the main pool with slow statements or
// statements blocked on locks. On SQLite their writes are also urgent
// (writeTurn): they wait for the write in progress only.
func (s *Store) controlPool() (*sqlx.DB, error) {
	s.controlOnce.Do(func() {
		db, err := sqlx.Open(s.dialect.driver, s.driverDSN)
		if err != nil {
			s.controlErr = err
			return
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		s.controlDB = db
	})
	return s.controlDB, s.controlErr
}

// SetControlIdleTime closes the control connection once it has gone unused
// for d (0: never, the default). A node sets it above the pace of its
// liveness writes: while idle it writes them on the control connection,
// which then stays open; while busy they borrow its main pool's idle
// connections (controlConn), and the control connection closes.
func (s *Store) SetControlIdleTime(d time.Duration) {
	if pool, err := s.controlPool(); err == nil {
		pool.SetConnMaxIdleTime(d)
	}
}

// borrowWait bounds how long a control statement waits for the main pool's
// connection it saw idle, should another caller take it first while the
// pool is full; the control connection takes over then.
const borrowWait = 50 * time.Millisecond

// controlLink is what a control statement runs on: the control pool or a
// connection borrowed from the main pool.
type controlLink interface {
	querier
	txBeginner
}

// controlConn returns what a control statement runs on, and the release
// the caller calls when done. Where a connection of the main pool is idle
// at that moment, it is that one: a statement there waits for no job work
// either, and a busy node, which holds a pool connection anyway, need not
// hold its control connection too. Else it is the control connection. On
// SQLite, where connections cost nothing on a server and writes take
// turns, it is always the control connection.
func (s *Store) controlConn(ctx context.Context) (controlLink, func(), error) {
	if !s.dialect.oneWriter && s.db.Stats().Idle > 0 {
		bctx, cancel := context.WithTimeout(ctx, borrowWait)
		c, err := s.db.Connx(bctx)
		cancel()
		if err == nil {
			return c, func() { _ = c.Close() }, nil
		}
	}
	pool, err := s.controlPool()
	if err != nil {
		return nil, nil, err
	}
	return pool, func() {}, nil
}

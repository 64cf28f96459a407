package dbstore

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// controlPool returns the control connection: a pool of one connection of
// its own, opened on first use (most commands never need it), that carries
// a node's liveness writes (NodeTouch) and the lease's statements
// (LeaseAcquire, LeaseRelease) whenever the main pool is full. Each is one
// short statement on one row, so none waits for long behind another; and
// none ever waits for a connection behind job work, which may fill the main
// pool with slow statements or statements blocked on locks. On SQLite their
// writes are also urgent (writeTurn): they wait for the write in progress
// only.
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
// for d (0: never, the default). A node's liveness writes use the control
// connection only while its main pool is full (controlConn): once the pool
// has room again, the control connection goes unused and closes after d.
func (s *Store) SetControlIdleTime(d time.Duration) {
	if pool, err := s.controlPool(); err == nil {
		pool.SetConnMaxIdleTime(d)
	}
}

// How long a control statement waits for a main pool connection before the
// control connection takes over: for one it saw idle, should another
// caller take it first and fill the pool (borrowWait), or for one the pool
// opens for it (openWait), which takes a handshake with the server.
const (
	borrowWait = 50 * time.Millisecond
	openWait   = time.Second
)

// controlLink is what a control statement runs on: the control pool or a
// connection borrowed from the main pool.
type controlLink interface {
	querier
	txBeginner
}

// controlConn returns what a control statement runs on, and the release
// the caller calls when done. While the main pool has room, a connection
// idle there or one it opens for the statement, it is that one: a
// statement there waits for no job work either, and a node, busy or idle,
// then holds the connections its pool holds and no more. The liveness
// writes of an idle node keep one pool connection open, which its job work
// takes over when work comes. Only while the pool is full, its connections
// all taken by job work, is it the control connection. On SQLite, where
// connections cost nothing on a server and writes take turns, it is always
// the control connection.
func (s *Store) controlConn(ctx context.Context) (controlLink, func(), error) {
	if !s.dialect.oneWriter {
		var wait time.Duration
		switch st := s.db.Stats(); {
		case st.Idle > 0:
			wait = borrowWait
		case st.OpenConnections < st.MaxOpenConnections:
			wait = openWait
		}
		if wait > 0 {
			bctx, cancel := context.WithTimeout(ctx, wait)
			c, err := s.db.Connx(bctx)
			cancel()
			if err == nil {
				return c, func() { _ = c.Close() }, nil
			}
		}
	}
	pool, err := s.controlPool()
	if err != nil {
		return nil, nil, err
	}
	return pool, func() {}, nil
}

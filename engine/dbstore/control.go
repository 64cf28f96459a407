package dbstore

import (
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
//
// The connection is kept while the Store is open: a node uses it every
// fifth of its node lease.
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

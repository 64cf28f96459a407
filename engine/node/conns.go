package node

import (
	"database/sql"
	"math"
	"sync"
	"time"
)

// poolStore is a store whose connections a node sizes (engine/dbstore):
// its main pool, and its control connection, which carries liveness writes
// and the lease's statements while the main pool is full.
type poolStore interface {
	SetIdleConns(n int, d time.Duration)
	ConnStats() sql.DBStats
	SetControlIdleTime(d time.Duration)
}

// dispatcherIdleConnTime is the least time the lease holder keeps a pool
// connection left unused: its rounds come again within the dispatch
// interval.
const dispatcherIdleConnTime = 5 * time.Second

// churnPerLook is how many connections a node that does not hold the lease
// may close between two looks, for being beyond those it keeps, before it
// keeps one more: a connection opened and closed again about every half
// second of the looks' pace (a fifth of the default node lease). Fewer are
// the overlaps of a burst of work, which pass; more are a node whose work
// keeps that many statements going at once.
const churnPerLook = 4

// connKeeper sizes the pool of a node's store by the node's part in the
// cluster. A node that does not hold the lease keeps one connection left
// unused, for a fourth of its node lease: a little more than the time
// between two liveness writes (a fifth), which take a pool connection idle
// at the time. So an idle node holds that one connection, and its job work
// takes it when work comes; a connection opened for more work at once is
// closed as soon as it is handed back, so a burst of work on many nodes
// does not leave each holding several. A node whose work keeps more
// statements going at once would open and close connections all along: it
// keeps one more after each liveness write that finds churnPerLook or more
// closed since the last, and one fewer again after one that finds none
// closed and none in use. The lease holder, whose rounds read and write on
// more than one at once and come again within the dispatch interval, keeps
// all of its own, at least five seconds. Either way the control
// connection closes once unused for half a node lease, two and a half
// liveness writes' time: the writes use it only while the pool is full.
type connKeeper struct {
	store poolStore // nil: the pool is not the node's to size
	lease time.Duration

	mu     sync.Mutex
	holder bool
	kept   int   // while not the holder
	closed int64 // the pool's count of connections closed beyond those kept, at the last look
}

// newConnKeeper is the keeper of store's pool, if it has one, for a node
// of node lease lease; hold sizes the pool.
func newConnKeeper(store any, lease time.Duration) *connKeeper {
	s, _ := store.(poolStore)
	return &connKeeper{store: s, lease: lease, kept: 1}
}

// hold sizes the connections for the holder of the lease, or for a node
// that does not hold it (one kept connection, to begin with).
func (k *connKeeper) hold(holder bool) {
	if k.store == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.holder = holder
	k.store.SetControlIdleTime(k.lease / 2)
	if holder {
		k.store.SetIdleConns(math.MaxInt, max(k.lease/4, dispatcherIdleConnTime))
		return
	}
	k.kept = 1
	k.store.SetIdleConns(k.kept, k.lease/4)
	// What that closed of the holder's idle connections is no churn.
	k.closed = k.store.ConnStats().MaxIdleClosed
}

// look keeps one connection more or fewer, by what the pool closed and
// holds now, on a node that does not hold the lease.
func (k *connKeeper) look() {
	if k.store == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.holder {
		return
	}
	st := k.store.ConnStats()
	closed := st.MaxIdleClosed - k.closed
	k.closed = st.MaxIdleClosed
	switch {
	case closed >= churnPerLook && k.kept < st.MaxOpenConnections:
		k.kept++
	case closed == 0 && st.InUse == 0 && k.kept > 1:
		k.kept--
	default:
		return
	}
	k.store.SetIdleConns(k.kept, k.lease/4)
}

// Package memstore is an engine.Store that keeps everything in memory, on
// an injected clock: the store of the simulator and of fast tests. It
// behaves as the SQL store does (the conformance suite in engine/storetest
// holds both to it), and it stays fast with a million jobs, because every
// lookup the engine makes goes through an index rather than a scan.
package memstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Store is the in-memory engine.Store. One mutex guards all of it: every
// method is short, and a transaction holds the lock from start to end, so
// it is isolated from every other caller.
//
// Jobs and nodes are copied on the way in and on the way out, so no caller
// ever holds a pointer into the store; a store told to (ShareJobs) hands
// its jobs out uncopied, to a caller that changes none.
type Store struct {
	clock engine.Clock

	mu        sync.Mutex
	jobs      *jobTable
	nextJobID int64
	logs      map[int64][]engine.LogChunk // by job, in seq order
	nextSeq   int64
	nodes     map[string]*engine.Node // stored health in State; live figures not kept
	lease     engine.Lease            // Now unused
	token     string
	reserved  reservations
	schedules map[string]*engine.Schedule // by name; made on first use
	changes   engine.JobChangeFeed
	// direct runs the TxStore methods outside a transaction; the lock is
	// held whenever it is used.
	direct txStore

	// attempts are the ended attempts of each job; nil until one ends.
	attempts attemptTable

	// typeLimits by type; nil until the first is set.
	typeLimits map[string]engine.TypeLimit

	// events is the audit trail.
	events eventLog

	// shareJobs: jobs go out as the stored values themselves (ShareJobs).
	shareJobs bool
}

var _ engine.Store = (*Store)(nil)

// New returns an empty store whose clock is clock: every timestamp it sets
// and every time it judges (run_after, lease expiry, stale nodes) is read
// from it, in UTC.
func New(clock engine.Clock) *Store {
	s := &Store{
		clock:    clock,
		jobs:     newJobTable(),
		logs:     map[int64][]engine.LogChunk{},
		nodes:    map[string]*engine.Node{},
		lease:    engine.Lease{ExpiresAt: time.Unix(0, 0).UTC(), AcquiredAt: time.Unix(0, 0).UTC()},
		reserved: newReservations(),
	}
	s.direct = txStore{s: s}
	return s
}

// now is the store's clock in UTC, which also drops any monotonic reading
// so stored times compare with reflect.DeepEqual.
func (s *Store) now() time.Time { return s.clock.Now().UTC() }

// Dialect is "memory".
func (s *Store) Dialect() string { return "memory" }

// Migrate does nothing: there is no schema.
func (s *Store) Migrate(context.Context) error { return nil }

// MigrationStatus is empty: there is no schema.
func (s *Store) MigrationStatus(context.Context) ([]engine.Migration, error) {
	return []engine.Migration{}, nil
}

// SchemaCurrent is true: there is no schema to be behind.
func (s *Store) SchemaCurrent(context.Context) (bool, error) { return true, nil }

// Close does nothing; the store stays usable.
func (s *Store) Close() error { return nil }

// Now is the store's clock.
func (s *Store) Now(context.Context) (time.Time, error) { return s.now(), nil }

// errTxDone is the answer of a TxStore used after its transaction ended.
var errTxDone = errors.New("memstore: the transaction has ended")

// Tx runs fn with the store's lock held, so nothing else sees its changes
// before it returns. Every change fn makes is logged with its inverse; an
// error (or a panic) from fn replays the log backwards, leaving the store as
// it was. As engine.Store says, fn uses only tx: a call to the Store itself
// would wait for the lock fn holds.
func (s *Store) Tx(ctx context.Context, fn func(tx engine.TxStore) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := &txStore{s: s, logging: true}
	defer func() {
		tx.done = true
		if r := recover(); r != nil {
			tx.rollback()
			panic(r)
		}
		if err != nil {
			tx.rollback()
			return
		}
		tx.signalCommitted()
	}()
	return fn(tx)
}

// txStore carries out the TxStore methods with the store's lock held: in a
// transaction (logging the undo of each change) or for one Store call.
type txStore struct {
	s       *Store
	logging bool
	undo    []func()
	done    bool
	wakes   bool // a change to report once the transaction has committed
}

// onUndo records how to reverse a change just made. Outside a transaction
// nothing is recorded; a hot path checks tx.logging before it builds f, as
// a closure that outlives the call costs an allocation whether kept or not.
func (tx *txStore) onUndo(f func()) {
	if tx.logging {
		tx.undo = append(tx.undo, f)
	}
}

func (tx *txStore) rollback() {
	for i := len(tx.undo) - 1; i >= 0; i-- {
		tx.undo[i]()
	}
	tx.undo = nil
}

func (tx *txStore) check() error {
	if tx.done {
		return errTxDone
	}
	return nil
}

// Now is the store's clock.
func (tx *txStore) Now(context.Context) (time.Time, error) {
	if err := tx.check(); err != nil {
		return time.Time{}, err
	}
	return tx.s.now(), nil
}

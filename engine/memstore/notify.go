package memstore

import (
	"context"

	"github.com/jobctl/jobctl/engine"
)

var _ engine.JobChangeNotifier = (*Store)(nil)

// JobChanges reports every job change that may let the dispatcher place
// more work; see engine.JobChangeNotifier. A memory store lives in one
// process, so every change reaches every subscriber.
func (s *Store) JobChanges(ctx context.Context) (<-chan struct{}, error) {
	return s.changes.Subscribe(ctx), nil
}

// jobChanged is called, with the lock held, by every write that puts a job
// in status to. Outside a transaction it signals at once: a subscriber that
// wakes reads after the lock is released, so it sees the change. In a
// transaction it waits for the commit, so a rolled-back change wakes nobody.
func (tx *txStore) jobChanged(to engine.Status) {
	if !to.Wakes() {
		return
	}
	if tx.logging {
		tx.wakes = true
		return
	}
	tx.s.changes.Signal()
}

// signalCommitted reports the changes of a committed transaction.
func (tx *txStore) signalCommitted() {
	if tx.wakes {
		tx.s.changes.Signal()
	}
}

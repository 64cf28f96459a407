package dbstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/jobctl/jobctl/engine"
)

var _ engine.JobChangeNotifier = (*Store)(nil)

// jobChangesChannel is the PostgreSQL notification channel of migration
// 003's trigger. Its payload is the schema of the jobs table, constant for
// one cluster, so PostgreSQL folds the notifications of one transaction
// (a batch of a thousand finishes) into one.
const jobChangesChannel = "jobctl_job_changes"

// The listener's reconnect pace: it retries soon after a connection loss,
// then backs off to a pace that costs the server nothing. Wake-ups missed
// meanwhile are covered by polling.
const (
	listenerMinReconnect = 500 * time.Millisecond
	listenerMaxReconnect = 30 * time.Second
)

// JobChanges reports job changes that may let the dispatcher place more
// work; see engine.JobChangeNotifier. Every dialect reports the writes made
// through this Store's process. PostgreSQL reports those of every process
// too: the first call opens a listening connection of its own (one more
// than the pools), kept until Close, that reconnects by itself and reports
// a reconnection as a change, since notifications may have been missed
// while it was away. Its error says that the listener could not connect;
// polling still works.
func (s *Store) JobChanges(ctx context.Context) (<-chan struct{}, error) {
	if s.dialect.notifiesJobChanges {
		if err := s.listenForJobChanges(ctx); err != nil {
			return nil, fmt.Errorf("listen for job changes on %s: %w", s.location, err)
		}
	}
	return s.changes.Subscribe(ctx), nil
}

// jobChanged is called by every write of a job through this Store, once
// its transaction has committed, with the status the job entered. It is the
// one hook a new write path needs.
func (s *Store) jobChanged(to engine.Status) {
	if to.Wakes() {
		s.wake()
	}
}

// wake signals this process's subscribers at once, or, in a transaction of
// Tx, once that transaction commits: a subscriber woken earlier would not
// see the change yet. A transaction store that belongs to a write method
// (txWakes nil) leaves the signal to that method.
func (s *Store) wake() {
	if s.tx == nil {
		s.changes.Signal()
		return
	}
	if s.txWakes != nil {
		s.txWakes.Store(true)
	}
}

// changeListener is the PostgreSQL listening connection of a Store,
// started by the first JobChanges.
type changeListener struct {
	mu     sync.Mutex
	l      *pq.Listener
	closed bool
}

var errStoreClosed = errors.New("the store is closed")

// listenForJobChanges starts the listener once and returns when it listens,
// so every change committed after JobChanges returns is heard. It gives up
// on the first failed connection attempt rather than wait for the database
// to come back.
func (s *Store) listenForJobChanges(ctx context.Context) error {
	lc := &s.listener
	lc.mu.Lock()
	defer lc.mu.Unlock()
	switch {
	case lc.closed:
		return errStoreClosed
	case lc.l != nil:
		return nil
	}
	var schema string
	if err := s.get(ctx, s.db, &schema, qJobChangesSchema, nil); err != nil {
		return fmt.Errorf("find the jobs table: %w", err)
	}
	failed := make(chan error, 1)
	l := pq.NewListener(s.driverDSN, listenerMinReconnect, listenerMaxReconnect, func(ev pq.ListenerEventType, err error) {
		if ev == pq.ListenerEventConnectionAttemptFailed {
			select {
			case failed <- err:
			default:
			}
		}
	})
	listened := make(chan error, 1)
	go func() { listened <- l.Listen(jobChangesChannel) }()
	var err error
	select {
	case err = <-listened:
	case err = <-failed:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		_ = l.Close()
		return err
	}
	lc.l = l
	go forwardNotifications(l.Notify, schema, &s.changes)
	return nil
}

// forwardNotifications signals the Store's subscribers for every job change
// notification of its own schema, and after every reconnection (a nil
// notification), until the listener is closed.
func forwardNotifications(notify <-chan *pq.Notification, schema string, changes *engine.JobChangeFeed) {
	for n := range notify {
		if n == nil || n.Extra == schema {
			changes.Signal()
		}
	}
}

// close stops the listener, if it was started, for good.
func (lc *changeListener) close() error {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.closed = true
	if lc.l == nil {
		return nil
	}
	err := lc.l.Close()
	lc.l = nil
	return err
}

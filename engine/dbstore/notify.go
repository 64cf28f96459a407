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

// jobChangesChannel is the PostgreSQL notification channel that the
// statements writing jobs notify (jobs_changed_notify). Its payload is the
// schema of the jobs table, constant for one cluster, so PostgreSQL folds
// the notifications of one transaction (a batch of a thousand finishes)
// into one.
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
// too, unless it is reached through a transaction pooler: while any
// subscription lasts, the Store holds a listening connection of its own
// (one more than the pools, within the budget), which reconnects by itself
// and reports a reconnection as a change, since notifications may have
// been missed while it was away; the last subscription to end closes it.
// Its error says that the listener could not connect; polling still works.
//
// Only a dispatcher needs other processes' changes; anything else
// subscribes with ProcessJobChanges and holds no connection for it.
func (s *Store) JobChanges(ctx context.Context) (<-chan struct{}, error) {
	if s.listens() {
		if err := s.listenForJobChanges(ctx); err != nil {
			return nil, fmt.Errorf("listen for job changes on %s: %w", s.location, err)
		}
		context.AfterFunc(ctx, s.listener.leave)
	}
	return s.changes.Subscribe(ctx), nil
}

// ProcessJobChanges is JobChanges for the changes made through this
// Store's process only: it never listens on a connection.
func (s *Store) ProcessJobChanges(ctx context.Context) <-chan struct{} {
	return s.changes.Subscribe(ctx)
}

// listens reports whether JobChanges hears other processes' changes, on a
// listening connection: PostgreSQL, not through a transaction pooler,
// where LISTEN cannot pass (a notification comes to whichever server
// connection listened, which the pooler has long handed to another
// client).
func (s *Store) listens() bool {
	return s.dialect.notifiesJobChanges && !s.pooled
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

// changeListener is the PostgreSQL listening connection of a Store, open
// while JobChanges has subscribers.
type changeListener struct {
	mu     sync.Mutex
	l      *pq.Listener
	users  int // subscriptions of JobChanges that have not ended
	closed bool
	// schema is the jobs table's schema, whose notifications are this
	// Store's: read when the listener first starts.
	schema string
}

var errStoreClosed = errors.New("the store is closed")

// listenForJobChanges counts one more user of the listener, starting it
// if it is not running, and returns when it listens, so every change
// committed after JobChanges returns is heard. It gives up on the first
// failed connection attempt rather than wait for the database to come back;
// then it counts no user. Each success is matched by one leave.
func (s *Store) listenForJobChanges(ctx context.Context) error {
	lc := &s.listener
	lc.mu.Lock()
	defer lc.mu.Unlock()
	switch {
	case lc.closed:
		return errStoreClosed
	case lc.l != nil:
		lc.users++
		return nil
	}
	if lc.schema == "" {
		if err := s.get(ctx, s.db, &lc.schema, qJobChangesSchema, nil); err != nil {
			return fmt.Errorf("find the jobs table: %w", err)
		}
	}
	schema := lc.schema
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
	lc.users = 1
	go forwardNotifications(l.Notify, schema, &s.changes)
	return nil
}

// leave counts one user of the listener less; the last one closes it, and
// its connection.
func (lc *changeListener) leave() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.users--; lc.users > 0 || lc.l == nil {
		return
	}
	_ = lc.l.Close()
	lc.l = nil
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

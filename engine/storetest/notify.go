package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// notifyTests run on a store that implements engine.JobChangeNotifier.
// Each test makes its changes after subscribing and sets up everything else
// before, so the signal it waits for can only come from the change under
// test (or be spurious, which the interface allows and no test can rule out).
var notifyTests = []subtest{
	{"JobChangesAfterInsert", testJobChangesAfterInsert},
	{"JobChangesAfterFinish", testJobChangesAfterFinish},
	{"JobChangesAfterBatchFinish", testJobChangesAfterBatchFinish},
	{"JobChangesAfterTxCommit", testJobChangesAfterTxCommit},
}

// peerNotifyTests run, besides, on a store with a Peer hook: its
// JobChanges reports the changes of other processes.
var peerNotifyTests = []subtest{
	{"JobChangesFromPeerInsert", testJobChangesFromPeerInsert},
	{"JobChangesFromPeerFinish", testJobChangesFromPeerFinish},
}

// peers holds the Peer hook of each store under test.
var peers sync.Map // engine.Store → func(*testing.T, engine.Store) engine.Store

// signalWait is how long a test waits for a notification: generous, since
// the machine may be busy, and never reached when the store works.
const signalWait = 30 * time.Second

// subscribe starts listening for job changes on s; the test is skipped for
// a store that offers none.
func subscribe(t *testing.T, s engine.Store) <-chan struct{} {
	t.Helper()
	n, ok := s.(engine.JobChangeNotifier)
	if !ok {
		t.Skipf("%s store does not implement engine.JobChangeNotifier", s.Dialect())
	}
	c, err := n.JobChanges(t.Context())
	if err != nil {
		t.Fatalf("JobChanges: %v", err)
	}
	return c
}

func wantSignal(t *testing.T, c <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(signalWait):
		t.Fatalf("no job change signal within %s after %s", signalWait, after)
	}
}

// testJobChangesAfterInsert: a new QUEUED job is new work. Writes never wait
// for a subscriber that does not read: three inserts leave one signal.
func testJobChangesAfterInsert(t *testing.T, s engine.Store) {
	c := subscribe(t, s)
	queued(t, s, 1)
	wantSignal(t, c, "a QUEUED job was inserted")
	for range 3 {
		queued(t, s, 1)
	}
	wantSignal(t, c, "three more QUEUED jobs were inserted")
}

// testJobChangesAfterFinish: a finished run frees its node's load.
func testJobChangesAfterFinish(t *testing.T, s engine.Store) {
	running := start(t, s, queued(t, s, 1), "n1")
	c := subscribe(t, s)
	finish(t, s, running, engine.RunSucceeded)
	wantSignal(t, c, "a running job finished")
}

// testJobChangesAfterBatchFinish: finishing many jobs in one call is
// reported too, as the node's batched finish does it.
func testJobChangesAfterBatchFinish(t *testing.T, s engine.Store) {
	var us []engine.JobUpdate
	for range 3 {
		j := start(t, s, queued(t, s, 1), "n1")
		us = append(us, engine.OutcomeUpdate(j, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 }))
	}
	c := subscribe(t, s)
	res, err := s.JobUpdateMany(t.Context(), us)
	if err != nil {
		t.Fatalf("JobUpdateMany: %v", err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("finish %d: %v", i, r.Err)
		}
	}
	wantSignal(t, c, "three running jobs finished in one batch")
}

// testJobChangesAfterTxCommit: a job inserted in a transaction is reported
// once the transaction has committed.
func testJobChangesAfterTxCommit(t *testing.T, s engine.Store) {
	c := subscribe(t, s)
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		_, err := tx.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
		return err
	})
	if err != nil {
		t.Fatalf("Tx: %v", err)
	}
	wantSignal(t, c, "a transaction inserting a QUEUED job committed")
}

// peer opens a second store on the database of s, as another process would.
func peer(t *testing.T, s engine.Store) engine.Store {
	t.Helper()
	open, _ := peers.Load(s)
	return open.(func(*testing.T, engine.Store) engine.Store)(t, s)
}

// testJobChangesFromPeerInsert: a job submitted by another process (jobctl
// submit) wakes this one, though it made no change itself.
func testJobChangesFromPeerInsert(t *testing.T, s engine.Store) {
	other := peer(t, s)
	c := subscribe(t, s)
	queued(t, other, 1)
	wantSignal(t, c, "another process inserted a QUEUED job")
}

// testJobChangesFromPeerFinish: a run finished by another process (a node)
// wakes this one.
func testJobChangesFromPeerFinish(t *testing.T, s engine.Store) {
	other := peer(t, s)
	running := start(t, other, queued(t, other, 1), "n1")
	c := subscribe(t, s)
	finish(t, other, running, engine.RunSucceeded)
	wantSignal(t, c, "another process finished a running job")
}

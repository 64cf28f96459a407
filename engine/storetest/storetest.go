// Package storetest is the conformance suite of engine.Store: one set of
// subtests that every store implementation must pass, so the SQL store on
// SQLite, PostgreSQL and MariaDB/MySQL and the in-memory store behave the
// same to the dispatcher, the runner, the simulator and the CLI. Among
// them, a property test holds each store's dispatchable paging to
// engine.DispatchHold on random job sets.
//
// A store's own tests call Run with a function that opens a fresh, migrated,
// empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) engine.Store { return openTestStore(t) })
//	}
//
// A store on a virtual clock calls RunWith with an Advance hook, so the
// tests that wait for time to pass move its clock instead.
package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// OpenFunc returns a fresh, migrated, empty store and registers its cleanup
// with t. It fails the test (never skips) when the store cannot be opened.
type OpenFunc func(t *testing.T) engine.Store

type subtest struct {
	name string
	fn   func(t *testing.T, s engine.Store)
}

// Options adapt the suite to a store.
type Options struct {
	// Advance moves the store's clock forward by d, for a store on a
	// virtual clock. Nil means the store follows real time, and the suite
	// waits for its clock to move.
	Advance func(s engine.Store, d time.Duration)
	// Peer opens a second store on the database of s with connections of
	// its own, as another process would, and registers its cleanup with t.
	// Set it for a store whose JobChanges reports the changes of other
	// processes (PostgreSQL); the suite then checks that it does.
	Peer func(t *testing.T, s engine.Store) engine.Store
}

// advancers holds the Advance hook of each store under test, for the
// helpers that wait on a store's clock.
var advancers sync.Map // engine.Store → func(engine.Store, time.Duration)

// Run runs every conformance subtest, each in parallel on its own store,
// for a store on the real clock.
func Run(t *testing.T, open OpenFunc) { RunWith(t, open, Options{}) }

// RunWith is Run with options.
func RunWith(t *testing.T, open OpenFunc, opts Options) {
	var all []subtest
	for _, group := range [][]subtest{
		metaTests, jobTests, updateTests, dispatchTests, progressTests, logTests, nodeTests,
		leaseTests, tokenTests, agreementTests, txTests, reservationTests, limitTests,
		bulkTests, batchTests, notifyTests, windowTests, scheduleTests,
		typeLimitTests, attemptTests, rollbackTests, eventTests, sortTests, usageTests, submitTests,
		operationTests, lateTests,
	} {
		all = append(all, group...)
	}
	if opts.Peer != nil {
		all = append(all, peerNotifyTests...)
	}
	for _, st := range all {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if opts.Advance != nil {
				advancers.Store(s, opts.Advance)
				t.Cleanup(func() { advancers.Delete(s) })
			}
			if opts.Peer != nil {
				peers.Store(s, opts.Peer)
				t.Cleanup(func() { peers.Delete(s) })
			}
			st.fn(t, s)
		})
	}
}

// insert creates a job, failing the test on error.
func insert(t *testing.T, s engine.Store, p engine.JobInsertParams) *engine.Job {
	t.Helper()
	if p.Type == "" {
		p.Type = engine.TypeNoop
	}
	if p.Status == "" {
		p.Status = engine.StatusQueued
	}
	j, err := s.JobInsert(t.Context(), p)
	if err != nil {
		t.Fatalf("JobInsert(%+v): %v", p, err)
	}
	return j
}

// queued creates a QUEUED job of type noop with the given load.
func queued(t *testing.T, s engine.Store, load float64) *engine.Job {
	t.Helper()
	return insert(t, s, engine.JobInsertParams{Load: load})
}

// move applies one transition from the job's current status and version;
// edit sets the optional fields. It is for the tests of how a store applies
// each JobUpdate field; every other test moves jobs with the engine's own
// constructors (start, restart, admin, finish). It fails the test on error.
func move(t *testing.T, s engine.Store, j *engine.Job, to engine.Status, edit func(u *engine.JobUpdate)) *engine.Job {
	t.Helper()
	u := engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}
	if edit != nil {
		edit(&u)
	}
	got, err := s.JobUpdate(t.Context(), u)
	if err != nil {
		t.Fatalf("JobUpdate(%+v): %v", u, err)
	}
	return got
}

// start takes a QUEUED or RESTART job to RUNNING on node with the
// engine's own handshake transitions, as the dispatcher and the node do.
func start(t *testing.T, s engine.Store, j *engine.Job, node string) *engine.Job {
	t.Helper()
	return apply(t, s, engine.QueuedStartUpdate(j, node))
}

// admin applies an operator's verb with the engine's own update for it.
func admin(t *testing.T, s engine.TxStore, j *engine.Job, v engine.Verb) *engine.Job {
	t.Helper()
	u, err := v.Update(j)
	if err != nil {
		t.Fatalf("%s job %d: %v", v, j.ID, err)
	}
	return apply(t, s, u)
}

// finish ends a run the way its node does, with the engine's outcome
// update for a run that ended so; no jitter, for repeatable backoffs.
func finish(t *testing.T, s engine.TxStore, j *engine.Job, outcome engine.RunOutcome) *engine.Job {
	t.Helper()
	res := engine.RunResult{Outcome: outcome, Reason: string(outcome)}
	switch outcome {
	case engine.RunFailed:
		res.ExitCode = 1
	case engine.RunCancelled, engine.RunTimedOut:
		res.ExitCode = -1
	}
	return apply(t, s, engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
}

// waitChildren has a running parent wait for its children.
func waitChildren(t *testing.T, s engine.TxStore, j *engine.Job) *engine.Job {
	t.Helper()
	return apply(t, s, waitChildrenUpdate(j))
}

// apply applies one update, in a transaction or not, failing the test on error.
func apply(t *testing.T, s engine.TxStore, u engine.JobUpdate) *engine.Job {
	t.Helper()
	got, err := s.JobUpdate(t.Context(), u)
	if err != nil {
		t.Fatalf("JobUpdate(%+v): %v", u, err)
	}
	return got
}

func get(t *testing.T, s engine.Store, id int64) *engine.Job {
	t.Helper()
	j, err := s.JobGet(t.Context(), id)
	if err != nil {
		t.Fatalf("JobGet(%d): %v", id, err)
	}
	return j
}

func dbNow(t *testing.T, s engine.Store) time.Time {
	t.Helper()
	now, err := s.Now(t.Context())
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	return now
}

// waitDBClockPast waits until the database's clock is after deadline. Waits
// are measured on the database clock, as the store's own time checks are.
func waitDBClockPast(t *testing.T, s engine.Store, deadline time.Time) {
	t.Helper()
	giveUp := time.Now().Add(30 * time.Second)
	for {
		now := dbNow(t, s)
		if now.After(deadline) {
			return
		}
		if advance, ok := advancers.Load(s); ok {
			advance.(func(engine.Store, time.Duration))(s, deadline.Sub(now)+time.Millisecond)
			continue
		}
		if time.Now().After(giveUp) {
			t.Fatalf("database clock %s never passed %s", now, deadline)
		}
		time.Sleep(min(deadline.Sub(now), 50*time.Millisecond) + time.Millisecond)
	}
}

func ids(jobs []*engine.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func wantIDs(t *testing.T, what string, jobs []*engine.Job, want ...*engine.Job) {
	t.Helper()
	got := ids(jobs)
	w := ids(want)
	if len(got) != len(w) {
		t.Errorf("%s: got ids %v, want %v", what, got, w)
		return
	}
	for i := range got {
		if got[i] != w[i] {
			t.Errorf("%s: got ids %v, want %v", what, got, w)
			return
		}
	}
}

func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one matching %q", what, err, target)
	}
}

// within reports whether t lies in [from, to].
func within(t, from, to time.Time) bool { return !t.Before(from) && !t.After(to) }

func wantUTC(t *testing.T, what string, v time.Time) {
	t.Helper()
	if v.IsZero() {
		t.Errorf("%s is zero", what)
	}
	if v.Location() != time.UTC {
		t.Errorf("%s = %s is not in UTC", what, v)
	}
}

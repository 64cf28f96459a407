package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
)

// jobState is one row of the verb table: a status, and for PAUSED whether
// the job was paused while running (it keeps its node).
type jobState struct {
	name   string
	status engine.Status
	node   string
}

var jobStates = []jobState{
	{"INSTANTIATED", engine.StatusInstantiated, ""},
	{"QUEUED", engine.StatusQueued, ""},
	{"RESTART", engine.StatusRestart, ""},
	{"RUNNING", engine.StatusRunning, "n1"},
	{"PAUSED held", engine.StatusPaused, ""},
	{"PAUSED running", engine.StatusPaused, "n1"},
	{"WAITING", engine.StatusWaiting, "n1"},
	{"CANCELLING", engine.StatusCancelling, "n1"},
	{"FINISHED", engine.StatusFinished, "n1"},
	{"WARNING", engine.StatusWarning, "n1"},
	{"FAILED", engine.StatusFailed, "n1"},
	{"CANCELLED", engine.StatusCancelled, ""},
	{"DELETED", engine.StatusDeleted, ""},
}

// verbOutcomes says, per verb, the state each jobState moves to; a state
// missing from a verb's map must be refused.
var verbOutcomes = map[engine.Verb]map[string]engine.Status{
	engine.VerbCancel: {
		"INSTANTIATED":   engine.StatusCancelled,
		"QUEUED":         engine.StatusCancelled,
		"RESTART":        engine.StatusCancelled,
		"PAUSED held":    engine.StatusCancelled,
		"RUNNING":        engine.StatusCancelling,
		"PAUSED running": engine.StatusCancelling,
		"WAITING":        engine.StatusCancelling,
	},
	engine.VerbPause: {
		"QUEUED":  engine.StatusPaused,
		"RESTART": engine.StatusPaused,
		"RUNNING": engine.StatusPaused,
	},
	engine.VerbResume: {
		"PAUSED held":    engine.StatusQueued,
		"PAUSED running": engine.StatusRunning,
	},
	engine.VerbRequeue: {
		"FINISHED":  engine.StatusRestart,
		"WARNING":   engine.StatusRestart,
		"FAILED":    engine.StatusRestart,
		"CANCELLED": engine.StatusRestart,
	},
	engine.VerbRelease: {
		"INSTANTIATED": engine.StatusQueued,
	},
	engine.VerbDelete: {
		"FINISHED":  engine.StatusDeleted,
		"WARNING":   engine.StatusDeleted,
		"FAILED":    engine.StatusDeleted,
		"CANCELLED": engine.StatusDeleted,
	},
}

func TestVerbUpdateEveryState(t *testing.T) {
	t.Parallel()
	for _, verb := range engine.Verbs {
		for _, st := range jobStates {
			t.Run(string(verb)+"/"+st.name, func(t *testing.T) {
				t.Parallel()
				j := &engine.Job{ID: 7, Status: st.status, Node: st.node, Version: 3}
				u, err := verb.Update(j)
				want, allowed := verbOutcomes[verb][st.name]
				if !allowed {
					var te *engine.TransitionError
					if !errors.As(err, &te) {
						t.Fatalf("got update %+v, error %v; want a *TransitionError", u, err)
					}
					if te.ID != 7 || te.From != st.status || te.Reason == "" {
						t.Errorf("TransitionError = %+v; want job 7, from %s, with a reason", te, st.status)
					}
					if !errors.Is(err, engine.ErrInvalidTransition) {
						t.Errorf("errors.Is(%v, ErrInvalidTransition) = false", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Update: %v; want a move to %s", err, want)
				}
				if u.ID != 7 || u.From != st.status || u.Version != 3 || u.To != want {
					t.Errorf("update = {ID %d From %s Version %d To %s}; want {7 %s 3 %s}",
						u.ID, u.From, u.Version, u.To, st.status, want)
				}
				if err := u.Validate(); err != nil {
					t.Errorf("the state machine refuses the verb's own update: %v", err)
				}
			})
		}
	}
}

func TestCancelUpdateFields(t *testing.T) {
	t.Parallel()
	u, err := engine.CancelUpdate(&engine.Job{ID: 1, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if !u.MarkFinished || u.Message == nil || *u.Message != engine.MessageCancelled {
		t.Errorf("cancel of a queued job = %+v; want finished now with message %q", u, engine.MessageCancelled)
	}
	u, err = engine.CancelUpdate(&engine.Job{ID: 1, Status: engine.StatusRunning, Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if u.MarkFinished || u.Node != nil {
		t.Errorf("cancel of a running job = %+v; want it left on its node, not finished until the node stops it", u)
	}
}

func TestPauseUpdateNode(t *testing.T) {
	t.Parallel()
	u, err := engine.PauseUpdate(&engine.Job{ID: 1, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if u.Node == nil || *u.Node != "" {
		t.Errorf("pause of a queued job sets node %v; want it cleared (held)", u.Node)
	}
	u, err = engine.PauseUpdate(&engine.Job{ID: 1, Status: engine.StatusRunning, Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Node != nil {
		t.Errorf("pause of a running job changes node to %q; want it kept", *u.Node)
	}
}

func TestResumeUpdateQueuesHeldJob(t *testing.T) {
	t.Parallel()
	u, err := engine.ResumeUpdate(&engine.Job{ID: 1, Status: engine.StatusPaused})
	if err != nil {
		t.Fatal(err)
	}
	if !u.MarkQueued {
		t.Errorf("resume of a held job = %+v; want queued_at set", u)
	}
	u, err = engine.ResumeUpdate(&engine.Job{ID: 1, Status: engine.StatusPaused, Node: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if u.MarkQueued || u.Node != nil {
		t.Errorf("resume of a job paused while running = %+v; want it back to RUNNING on its node", u)
	}
}

func TestRequeueUpdateClearsResult(t *testing.T) {
	t.Parallel()
	u, err := engine.RequeueUpdate(&engine.Job{ID: 1, Status: engine.StatusFailed, Node: "n1", ExitCode: engine.Ptr(3)})
	if err != nil {
		t.Fatal(err)
	}
	if !u.ClearResult || u.Node == nil || *u.Node != "" || !u.RebaseAttempts {
		t.Errorf("requeue = %+v; want the result and node cleared and a fresh set of attempts", u)
	}
}

func TestReleaseUpdateMarksQueued(t *testing.T) {
	t.Parallel()
	u, err := engine.ReleaseUpdate(&engine.Job{ID: 1, Status: engine.StatusInstantiated})
	if err != nil {
		t.Fatal(err)
	}
	if !u.MarkQueued {
		t.Errorf("release = %+v; want queued_at set", u)
	}
}

func TestRefusalReasonsSayWhatToDo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		verb   engine.Verb
		status engine.Status
		want   string
	}{
		{engine.VerbCancel, engine.StatusFinished, "job 7 is FINISHED and cannot become CANCELLED: nothing to cancel"},
		{engine.VerbPause, engine.StatusWaiting, "job 7 is WAITING and cannot become PAUSED: it is waiting for its children; pause those instead"},
		{engine.VerbResume, engine.StatusInstantiated, "job 7 is INSTANTIATED and cannot become QUEUED: it is held, not paused; release it instead"},
		{engine.VerbDelete, engine.StatusRunning, "job 7 is RUNNING and cannot become DELETED: only ended jobs can be deleted; cancel it first"},
	}
	for _, c := range cases {
		_, err := c.verb.Update(&engine.Job{ID: 7, Status: c.status})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s of a %s job: error %q; want %q", c.verb, c.status, err, c.want)
		}
	}
}

// newStore opens a fresh, migrated SQLite store in the test's temp dir.
func newStore(t *testing.T) engine.Store {
	t.Helper()
	ctx := context.Background()
	s, err := dbstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func insertJob(t *testing.T, s engine.Store, parent *int64) *engine.Job {
	t.Helper()
	j, err := s.JobInsert(context.Background(), engine.JobInsertParams{
		Type: engine.TypeNoop, Load: 1, Status: engine.StatusQueued, ParentID: parent, MaxAttempts: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// moveJob drives a job through the state machine to a status, the way a
// dispatcher and node would.
func moveJob(t *testing.T, s engine.Store, j *engine.Job, path ...engine.Status) *engine.Job {
	t.Helper()
	for _, to := range path {
		u := engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}
		if to == engine.StatusRunning && j.Status.Dispatchable() {
			u.Node, u.IncrementAttempt = engine.Ptr("n1"), true
		}
		var err error
		if j, err = s.JobUpdate(context.Background(), u); err != nil {
			t.Fatalf("moving job %d to %s: %v", j.ID, to, err)
		}
	}
	return j
}

func TestApplyVerbRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	j := insertJob(t, s, nil)

	steps := []struct {
		verb engine.Verb
		want engine.Status
	}{
		{engine.VerbPause, engine.StatusPaused},
		{engine.VerbResume, engine.StatusQueued},
		{engine.VerbCancel, engine.StatusCancelled},
		{engine.VerbRequeue, engine.StatusRestart},
		{engine.VerbCancel, engine.StatusCancelled},
		{engine.VerbDelete, engine.StatusDeleted},
	}
	for _, st := range steps {
		got, err := engine.ApplyVerb(ctx, s, j.ID, st.verb, testActor)
		if err != nil {
			t.Fatalf("%s: %v", st.verb, err)
		}
		if got.Status != st.want {
			t.Fatalf("%s: status %s; want %s", st.verb, got.Status, st.want)
		}
	}
	got, err := s.JobGet(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusDeleted || got.Version != j.Version+int64(len(steps)) {
		t.Errorf("stored job: status %s version %d; want DELETED version %d", got.Status, got.Version, j.Version+int64(len(steps)))
	}
}

func TestApplyVerbRefusalChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	j := insertJob(t, s, nil)
	_, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbDelete, testActor)
	if !errors.Is(err, engine.ErrInvalidTransition) {
		t.Fatalf("delete of a queued job: %v; want ErrInvalidTransition", err)
	}
	got, err := s.JobGet(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusQueued || got.Version != j.Version {
		t.Errorf("refused delete changed the job: status %s version %d", got.Status, got.Version)
	}
}

func TestApplyVerbUnknownJob(t *testing.T) {
	t.Parallel()
	_, err := engine.ApplyVerb(context.Background(), newStore(t), 4242, engine.VerbCancel, testActor)
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("cancel of an unknown job: %v; want ErrNotFound", err)
	}
}

func TestApplyVerbCancelsDescendants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	parent := moveJob(t, s, insertJob(t, s, nil), engine.StatusRunning)
	queuedChild := insertJob(t, s, &parent.ID)
	runningChild := moveJob(t, s, insertJob(t, s, &parent.ID), engine.StatusRunning)
	doneChild := moveJob(t, s, insertJob(t, s, &parent.ID), engine.StatusRunning, engine.StatusFinished)
	grandchild := insertJob(t, s, &doneChild.ID)
	unrelated := insertJob(t, s, nil)

	got, err := engine.ApplyVerb(ctx, s, parent.ID, engine.VerbCancel, testActor)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusCancelling {
		t.Errorf("parent: %s; want CANCELLING", got.Status)
	}
	want := map[int64]engine.Status{
		queuedChild.ID:  engine.StatusCancelled,
		runningChild.ID: engine.StatusCancelling,
		doneChild.ID:    engine.StatusFinished,
		grandchild.ID:   engine.StatusCancelled,
		unrelated.ID:    engine.StatusQueued,
	}
	for id, st := range want {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != st {
			t.Errorf("job %d: %s; want %s", id, j.Status, st)
		}
	}
}

// conflictingStore changes the job under ApplyVerb the first times it
// reads it, the way a node racing the operator would.
type conflictingStore struct {
	store     engine.Transactor
	mu        sync.Mutex
	conflicts int
}

// lose reports whether the next update loses its race.
func (s *conflictingStore) lose() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conflicts > 0 {
		s.conflicts--
		return true
	}
	return false
}

// Tx loses the races of the updates in the transaction.
func (s *conflictingStore) Tx(ctx context.Context, fn func(tx engine.TxStore) error) error {
	return s.store.Tx(ctx, func(tx engine.TxStore) error { return fn(conflictingTx{TxStore: tx, s: s}) })
}

type conflictingTx struct {
	engine.TxStore
	s *conflictingStore
}

func (tx conflictingTx) JobUpdate(ctx context.Context, u engine.JobUpdate) (*engine.Job, error) {
	if tx.s.lose() {
		return nil, engine.ErrConflict
	}
	return tx.TxStore.JobUpdate(ctx, u)
}

func TestApplyVerbRetriesConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := newStore(t)
	j := insertJob(t, base, nil)

	s := &conflictingStore{store: base, conflicts: 3}
	got, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbPause, testActor)
	if err != nil {
		t.Fatalf("after 3 lost races: %v; want success", err)
	}
	if got.Status != engine.StatusPaused {
		t.Errorf("status %s; want PAUSED", got.Status)
	}

	s = &conflictingStore{store: base, conflicts: 1000}
	_, err = engine.ApplyVerb(ctx, s, j.ID, engine.VerbResume, testActor)
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("a job that never stops changing: %v; want ErrConflict", err)
	}
}

func TestApplyVerbRaceOneWinner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	j := insertJob(t, s, nil)

	// Operators pausing the same job at once: exactly one pause applies
	// (the version moves by one); the others see it paused already, change
	// nothing and succeed, since the job is where they wanted it.
	const operators = 8
	var wg sync.WaitGroup
	errs := make([]error, operators)
	for i := range operators {
		wg.Go(func() { _, errs[i] = engine.ApplyVerb(ctx, s, j.ID, engine.VerbPause, testActor) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("a concurrent pause failed: %v; want it to find the job paused", err)
		}
	}
	got, err := s.JobGet(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusPaused || got.Version != j.Version+1 {
		t.Errorf("job: %s version %d; want PAUSED version %d", got.Status, got.Version, j.Version+1)
	}
}

// testActor is the operator of the tests' admin verbs and submits.
var testActor = engine.Actor{Who: "tester@testhost"}

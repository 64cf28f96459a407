package storetest

import (
	"errors"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// The engine's operations (engine/operations.go) make a state change and
// its follow-ups in one Store.Tx; these hold every store to what they need
// of it: JobUpdateMany in a transaction, and the whole of each operation
// kept or none of it.
var operationTests = []subtest{
	{"TxJobUpdateManyKeepsOrUndoesTheBatch", testTxJobUpdateMany},
	{"RecoverJobsCancelsTheChildrenOfTheirAttempts", testRecoverJobsCancelsChildren},
	{"RemoveNodeRecoversItsJobsAndCancelsTheirChildren", testRemoveNodeCancelsChildren},
	{"CancelTakesEveryDescendant", testCancelCascade},
	{"RepairChildrenEndsWhatAnInterruptedOperationLeft", testRepairChildren},
	{"DrainStopsAJobWithItsAttemptAndRequeuesIt", testDrainStopAndRequeue},
	{"RecordOutcomesCancelsTheChildrenOfRetriedRuns", testRecordOutcomes},
}

func testTxJobUpdateMany(t *testing.T, s engine.Store) {
	a, b := queued(t, s, 1), queued(t, s, 1)
	stale := *b
	stale.Version--
	boom := errors.New("boom")
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		res, err := tx.JobUpdateMany(t.Context(), []engine.JobUpdate{engine.QueuedStartUpdate(a, "n1"), engine.QueuedStartUpdate(&stale, "n1")})
		if err != nil {
			return err
		}
		if res[0].Err != nil || res[0].Job.Status != engine.StatusRunning || !errors.Is(res[1].Err, engine.ErrConflict) {
			t.Errorf("JobUpdateMany in a transaction: %+v, %+v; want the first applied and the stale one a conflict", res[0], res[1])
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx: %v; want the callback's error", err)
	}
	if got := get(t, s, a.ID); got.Status != engine.StatusQueued || got.Version != a.Version {
		t.Errorf("job after the rollback: %s version %d; want QUEUED version %d", got.Status, got.Version, a.Version)
	}
	err = s.Tx(t.Context(), func(tx engine.TxStore) error {
		_, err := tx.JobUpdateMany(t.Context(), []engine.JobUpdate{engine.QueuedStartUpdate(a, "n1")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, a.ID); got.Status != engine.StatusRunning {
		t.Errorf("job after the commit: %s; want RUNNING", got.Status)
	}
}

// family is a parent running on node n1 and its children: one queued,
// one running on n2, one that ended with a queued child of its own; and
// a job that is no kin.
type family struct {
	parent, queued, running, ended, grandchild, stranger *engine.Job
}

func newFamily(t *testing.T, s engine.Store, parentType string) family {
	var f family
	f.parent = start(t, s, insert(t, s, engine.JobInsertParams{Type: parentType}), "n1")
	f.queued = insert(t, s, engine.JobInsertParams{ParentID: &f.parent.ID})
	f.running = start(t, s, insert(t, s, engine.JobInsertParams{ParentID: &f.parent.ID}), "n2")
	f.ended = finish(t, s, start(t, s, insert(t, s, engine.JobInsertParams{ParentID: &f.parent.ID}), "n2"), engine.RunSucceeded)
	f.grandchild = insert(t, s, engine.JobInsertParams{ParentID: &f.ended.ID})
	f.stranger = start(t, s, insert(t, s, engine.JobInsertParams{}), "n2")
	return f
}

// wantCancelled checks that the unfinished kin of f's parent are being
// cancelled, and the rest left alone.
func (f family) wantCancelled(t *testing.T, s engine.Store) {
	t.Helper()
	f.want(t, s, engine.StatusCancelled, engine.StatusCancelling, engine.StatusCancelled)
}

func (f family) want(t *testing.T, s engine.Store, queued, running, grandchild engine.Status) {
	t.Helper()
	for _, c := range []struct {
		what string
		j    *engine.Job
		want engine.Status
	}{
		{"queued child", f.queued, queued}, {"running child", f.running, running},
		{"ended child", f.ended, engine.StatusFinished}, {"grandchild", f.grandchild, grandchild},
		{"stranger", f.stranger, engine.StatusRunning},
	} {
		if got := get(t, s, c.j.ID); got.Status != c.want {
			t.Errorf("%s (job %d): %s; want %s", c.what, c.j.ID, got.Status, c.want)
		}
	}
}

func testRecoverJobsCancelsChildren(t *testing.T, s engine.Store) {
	f := newFamily(t, s, engine.TypeNoop)
	cancelling := admin(t, s, start(t, s, queued(t, s, 1), "n1"), engine.VerbCancel)
	changed := start(t, s, queued(t, s, 1), "n1")
	stale := *changed
	stale.Version--
	results, err := engine.RecoverJobs(t.Context(), s, []*engine.Job{f.parent, cancelling, &stale}, "node n1 is gone", engine.Actor{}, engine.VerbEvent{})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Err != nil || results[0].Job.Status != engine.StatusRestart {
		t.Errorf("parent: %+v; want RESTART", results[0])
	}
	if results[1].Err != nil || results[1].Job.Status != engine.StatusCancelled {
		t.Errorf("job being cancelled: %+v; want CANCELLED", results[1])
	}
	if !errors.Is(results[2].Err, engine.ErrConflict) {
		t.Errorf("job read before it changed: %+v; want a conflict", results[2])
	}
	f.wantCancelled(t, s)

	// A workflow's jobs belong to the whole workflow: a step run again
	// finds them as they are.
	w := newFamily(t, s, engine.TypeWorkflow)
	if _, err := engine.RecoverJobs(t.Context(), s, []*engine.Job{w.parent}, "node n1 is gone", engine.Actor{}, engine.VerbEvent{}); err != nil {
		t.Fatal(err)
	}
	w.want(t, s, engine.StatusQueued, engine.StatusRunning, engine.StatusQueued)
}

func testRemoveNodeCancelsChildren(t *testing.T, s engine.Store) {
	n := register(t, s, sampleNode("n1"))
	f := newFamily(t, s, engine.TypeNoop)
	if err := s.NodeSetState(t.Context(), n.Name, engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	by := engine.Actor{Who: "op@host"}
	recovered, err := engine.RemoveNode(t.Context(), s, engine.RemoveNodeParams{
		Name: n.Name, StaleAfter: n.GoneAfter(),
		RecoverJobs: true, Why: "node n1 was removed",
		Event: engine.EventAppendParams{Verb: engine.EventNodesRm, Detail: "OFFLINE"},
	}, by)
	if err != nil {
		t.Fatal(err)
	}
	if len(recovered) != 1 || recovered[0].ID != f.parent.ID {
		t.Errorf("recovered %v; want the parent only", recovered)
	}
	if got := get(t, s, f.parent.ID); got.Status != engine.StatusRestart || got.Node != "" {
		t.Errorf("parent: %s on %q; want RESTART off the node", got.Status, got.Node)
	}
	f.wantCancelled(t, s)
	if _, err := s.NodeGet(t.Context(), n.Name); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("node after RemoveNode: %v; want it gone", err)
	}
	events, err := s.EventList(t.Context(), engine.EventListParams{JobID: &f.running.ID})
	if err != nil || len(events) != 1 || events[0].Who != by.Who || events[0].Verb != engine.EventNodesRm {
		t.Errorf("events of the running child: %+v, %v; want its cancel by %s", events, err, by.Who)
	}
}

func testCancelCascade(t *testing.T, s engine.Store) {
	f := newFamily(t, s, engine.TypeNoop)
	got, err := engine.ApplyVerb(t.Context(), s, f.parent.ID, engine.VerbCancel, engine.Actor{Who: "op@host"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != engine.StatusCancelling {
		t.Errorf("parent: %s; want CANCELLING", got.Status)
	}
	f.wantCancelled(t, s)
}

// later waits until the store's clock has passed every time it has set
// so far, so the next change is later than them all.
func later(t *testing.T, s engine.Store) {
	t.Helper()
	waitDBClockPast(t, s, dbNow(t, s))
}

// repairAll runs RepairChildren over every job.
func repairAll(t *testing.T, s engine.Store) int {
	t.Helper()
	n, err := engine.RepairChildren(t.Context(), s, engine.RepairChildrenParams{})
	if err != nil {
		t.Fatalf("RepairChildren: %v", err)
	}
	return n
}

func testRepairChildren(t *testing.T, s engine.Store) {
	// A parent recovered without its follow-ups, as a crash between the
	// two steps would have left it.
	lost := newFamily(t, s, engine.TypeNoop)
	later(t, s)
	apply(t, s, engine.RecoverUpdate(lost.parent, "node n1 is gone"))
	// Its next attempt's child is its own, and stays.
	later(t, s)
	again := start(t, s, get(t, s, lost.parent.ID), "n3")
	later(t, s)
	newChild := insert(t, s, engine.JobInsertParams{ParentID: &again.ID})

	// A cancel whose cascade was cut short after the parent.
	cut := newFamily(t, s, engine.TypeNoop)
	admin(t, s, cut.parent, engine.VerbCancel)
	// A child an operator requeued under a cancelled parent is theirs.
	mine := insert(t, s, engine.JobInsertParams{ParentID: &cut.parent.ID})
	mine = admin(t, s, admin(t, s, mine, engine.VerbCancel), engine.VerbRequeue)

	// A workflow step run again keeps the workflow's jobs.
	flow := newFamily(t, s, engine.TypeWorkflow)
	later(t, s)
	apply(t, s, engine.RecoverUpdate(flow.parent, "node n1 is gone"))

	if n := repairAll(t, s); n != 6 {
		t.Errorf("repair cancelled %d jobs; want 6: of the lost attempt and of the cut cascade each, two children and the grandchild below an ended child", n)
	}
	lost.wantCancelled(t, s)
	cut.wantCancelled(t, s)
	flow.want(t, s, engine.StatusQueued, engine.StatusRunning, engine.StatusQueued)
	if got := get(t, s, newChild.ID); got.Status != engine.StatusQueued {
		t.Errorf("child of the parent's next attempt: %s; want it left QUEUED", got.Status)
	}
	if got := get(t, s, mine.ID); got.Status != engine.StatusRestart {
		t.Errorf("child requeued by an operator: %s; want it left in RESTART", got.Status)
	}
	if n := repairAll(t, s); n != 0 {
		t.Errorf("a second repair cancelled %d jobs; want none", n)
	}
}

func testDrainStopAndRequeue(t *testing.T, s engine.Store) {
	f := newFamily(t, s, engine.TypeNoop)
	by, ev := engine.Actor{Who: "op@host"}, engine.VerbEvent{Verb: engine.EventNodesDrain}
	if stopped, _, err := engine.DrainStop(t.Context(), s, f.parent.ID, "n2", "stopped", by, ev); err != nil || stopped {
		t.Errorf("DrainStop of a job on another node: %v, %v; want nothing stopped", stopped, err)
	}
	stopped, left, err := engine.DrainStop(t.Context(), s, f.parent.ID, "n1", "stopped at the deadline", by, ev)
	if err != nil || left != nil || !stopped {
		t.Fatalf("DrainStop: %v, %v, %v; want it stopped", stopped, left, err)
	}
	parent := get(t, s, f.parent.ID)
	if parent.Status != engine.StatusCancelling || parent.Message != "stopped at the deadline" {
		t.Errorf("parent: %s %q; want CANCELLING with the drain's message", parent.Status, parent.Message)
	}
	f.wantCancelled(t, s)
	if again, _, err := engine.DrainStop(t.Context(), s, f.parent.ID, "n1", "stopped", by, ev); err != nil || again {
		t.Errorf("DrainStop again: %v, %v; want nothing more to stop", again, err)
	}

	requeued, pending, err := engine.DrainRequeue(t.Context(), s, f.parent.ID, "requeued", by, ev)
	if err != nil || requeued || !pending {
		t.Errorf("DrainRequeue while its node stops it: %v, %v, %v; want it pending", requeued, pending, err)
	}
	finish(t, s, parent, engine.RunCancelled)
	requeued, pending, err = engine.DrainRequeue(t.Context(), s, f.parent.ID, "requeued", by, ev)
	if err != nil || !requeued || pending {
		t.Errorf("DrainRequeue once stopped: %v, %v, %v; want it requeued", requeued, pending, err)
	}
	if got := get(t, s, f.parent.ID); got.Status != engine.StatusRestart || got.Message != "requeued" {
		t.Errorf("parent after the requeue: %s %q; want RESTART", got.Status, got.Message)
	}
	events, err := s.EventList(t.Context(), engine.EventListParams{JobID: &f.parent.ID})
	if err != nil || len(events) != 2 || events[0].Verb != engine.EventNodesDrain || events[1].Verb != engine.EventNodesDrain {
		t.Errorf("events of the drained job: %+v, %v; want its stop and its requeue", events, err)
	}
}

func testRecordOutcomes(t *testing.T, s engine.Store) {
	retried := start(t, s, insert(t, s, engine.JobInsertParams{MaxAttempts: 2}), "n1")
	child := insert(t, s, engine.JobInsertParams{ParentID: &retried.ID})
	ended := start(t, s, insert(t, s, engine.JobInsertParams{}), "n1")
	endedChild := insert(t, s, engine.JobInsertParams{ParentID: &ended.ID})
	noWait := func() float64 { return 0.5 }
	us := []engine.JobUpdate{
		engine.OutcomeUpdate(retried, engine.RunResult{Outcome: engine.RunFailed, ExitCode: 1}, false, noWait),
		engine.OutcomeUpdate(ended, engine.RunResult{Outcome: engine.RunSucceeded}, false, noWait),
	}
	results, err := engine.RecordOutcomes(t.Context(), s, []*engine.Job{retried, ended}, us)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil || r.Job != nil {
			t.Errorf("result %d: %+v; want applied, without the job", i, r)
		}
	}
	for _, c := range []struct {
		what string
		j    *engine.Job
		want engine.Status
	}{
		{"retried job", retried, engine.StatusRestart}, {"child of its lost attempt", child, engine.StatusCancelled},
		{"job that ended", ended, engine.StatusFinished}, {"child of the job that ended", endedChild, engine.StatusQueued},
	} {
		if got := get(t, s, c.j.ID); got.Status != c.want {
			t.Errorf("%s: %s; want %s", c.what, got.Status, c.want)
		}
	}
}

package workflow

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/memstore"
)

// stores runs f on the in-memory store and on SQLite.
func stores(t *testing.T, f func(t *testing.T, s engine.Store)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		f(t, memstore.New(engine.NewVirtualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))))
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := dbstore.Open(t.Context(), sqlitetest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		f(t, s)
	})
}

func mustParse(t *testing.T, text string) *Spec {
	t.Helper()
	spec, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

const threeOps = `name: nightly
operations:
  - name: dump
    args: [pg_dump]
  - name: migrate
    args: [migrate]
    on_failure: %s
  - name: report
    type: noop
`

// runner plays the nodes: it starts the first dispatchable job (so the
// key rule decides the order), runs a step for real and ends an operation
// as outcome says (FINISHED when unnamed).
type runner struct {
	t       *testing.T
	s       engine.Store
	outcome map[string]engine.Status
	ran     []string // operation names and "step N", in the order they ran
}

func (r *runner) start() *engine.Job {
	r.t.Helper()
	ctx := r.t.Context()
	j := nextDispatchable(r.t, r.s)
	if j == nil {
		return nil
	}
	var err error
	j, err = r.s.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusRunning,
		Node: engine.Ptr("n1"), IncrementAttempt: true, MarkStarted: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return j
}

func (r *runner) end(j *engine.Job, to engine.Status, message string) {
	r.t.Helper()
	if _, err := r.s.JobUpdate(r.t.Context(), engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to,
		MarkFinished: true, Message: engine.Ptr(message)}); err != nil {
		r.t.Fatal(err)
	}
}

// step runs one job; false when none was dispatchable.
func (r *runner) step() bool {
	r.t.Helper()
	j := r.start()
	if j == nil {
		return false
	}
	if j.Type != engine.TypeWorkflow {
		r.ran = append(r.ran, j.Operation)
		to := r.outcome[j.Operation]
		if to == "" {
			to = engine.StatusFinished
		}
		r.end(j, to, "")
		return true
	}
	res, err := RunStep(r.t.Context(), r.s, j.ID, j.Attempt)
	r.ran = append(r.ran, "step "+string(rune('0'+res.Step)))
	switch {
	case err != nil:
		r.end(j, engine.StatusFailed, err.Error())
	case res.Warning != "":
		r.end(j, engine.StatusWarning, res.Warning)
	default:
		r.end(j, engine.StatusFinished, "")
	}
	return true
}

func (r *runner) all() {
	for range 100 {
		if !r.step() {
			return
		}
	}
	r.t.Fatal("the workflow does not end")
}

func start(t *testing.T, s engine.Store, text string) *engine.Job {
	t.Helper()
	root, err := Start(t.Context(), s, mustParse(t, text), "tester")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func get(t *testing.T, s engine.Store, id int64) *Workflow {
	t.Helper()
	w, err := Get(t.Context(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestStopEndsTheWorkflowFailedAndCreatesNothingMore(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		root := start(t, s, strings.Replace(threeOps, "%s", "stop", 1))
		r := &runner{t: t, s: s, outcome: map[string]engine.Status{"migrate": engine.StatusFailed}}
		r.all()
		if got, want := strings.Join(r.ran, ","), "step 0,dump,step 1,migrate,step 2"; got != want {
			t.Fatalf("ran %s, want %s", got, want)
		}
		w := get(t, s, root.ID)
		if w.Jobs[0].Status != engine.StatusFinished || w.Jobs[1].Status != engine.StatusFailed || w.Jobs[2] != nil {
			t.Fatalf("operations %v %v %v", w.Jobs[0].Status, w.Jobs[1].Status, w.Jobs[2])
		}
		st := w.Derive()
		want := "operation 2 'migrate' ended FAILED; the workflow stops"
		if st.Status != engine.StatusFailed || st.Reason != want {
			t.Fatalf("state %s %q, want FAILED %q", st.Status, st.Reason, want)
		}
		if w.Steps[2].Status != engine.StatusFailed || w.Steps[2].Message != want {
			t.Fatalf("step 2 %s %q", w.Steps[2].Status, w.Steps[2].Message)
		}
		for _, j := range append(w.Jobs[:2], w.Steps[1:3]...) {
			if j.Key != engine.WorkflowKey(root.ID) || j.ParentID == nil || *j.ParentID != root.ID || j.Creator != "tester" {
				t.Fatalf("job %d key %q parent %v creator %q", j.ID, j.Key, j.ParentID, j.Creator)
			}
		}
	})
}

func TestContinueRunsTheNextOperationAndEndsWarning(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		root := start(t, s, strings.Replace(threeOps, "%s", "continue", 1))
		r := &runner{t: t, s: s, outcome: map[string]engine.Status{"migrate": engine.StatusFailed}}
		r.all()
		if got, want := strings.Join(r.ran, ","), "step 0,dump,step 1,migrate,step 2,report,step 3"; got != want {
			t.Fatalf("ran %s, want %s", got, want)
		}
		w := get(t, s, root.ID)
		st := w.Derive()
		want := "went on past operation 2 'migrate' (FAILED)"
		if st.Status != engine.StatusWarning || st.Reason != want || st.Done != 3 || st.Current != 0 || st.FinishedAt == nil {
			t.Fatalf("state %+v, want WARNING %q", st, want)
		}
		if w.Steps[2].Status != engine.StatusFinished || w.Steps[3].Status != engine.StatusWarning {
			t.Fatalf("steps 2 and 3 are %s and %s", w.Steps[2].Status, w.Steps[3].Status)
		}
	})
}

func TestAllSucceededFinishes(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		root := start(t, s, strings.Replace(threeOps, "%s", "stop", 1))
		r := &runner{t: t, s: s}
		r.all()
		st := get(t, s, root.ID).Derive()
		if st.Status != engine.StatusFinished || st.Reason != "all 3 operations succeeded" {
			t.Fatalf("state %+v", st)
		}
	})
}

func TestARerunStepCreatesNothingTwice(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		ctx := t.Context()
		root := start(t, s, strings.Replace(threeOps, "%s", "stop", 1))
		r := &runner{t: t, s: s}
		j := r.start()
		first, err := RunStep(ctx, s, j.ID, j.Attempt)
		if err != nil || len(first.Created) != 2 {
			t.Fatalf("first run: %+v %v", first, err)
		}
		// The node died before it recorded the end: the step runs again.
		again, err := RunStep(ctx, s, j.ID, j.Attempt)
		if err != nil || len(again.Created) != 0 {
			t.Fatalf("second run: %+v %v", again, err)
		}
		children, err := s.JobList(ctx, engine.JobListParams{ParentID: &root.ID})
		if err != nil || len(children) != 2 {
			t.Fatalf("%d children, want 2 (%v)", len(children), err)
		}
		// A later attempt of the job is a run of its own; a stale one
		// changes nothing.
		if _, err := RunStep(ctx, s, j.ID, j.Attempt+1); !errors.Is(err, ErrMovedOn) {
			t.Fatalf("stale attempt: %v, want ErrMovedOn", err)
		}
	})
}

func TestTheNextStepWaitsForItsOperation(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		ctx := t.Context()
		root := start(t, s, strings.Replace(threeOps, "%s", "stop", 1))
		r := &runner{t: t, s: s}
		r.step() // step 0
		op := r.start()
		if op == nil || op.Operation != "dump" {
			t.Fatalf("started %+v, want dump", op)
		}
		w := get(t, s, root.ID)
		next := w.Steps[1]
		keyJobs, err := s.JobList(ctx, engine.JobListParams{Key: next.Key})
		if err != nil {
			t.Fatal(err)
		}
		now, _ := s.Now(ctx)
		hold := engine.DispatchHold(next, now, keyJobs)
		want := "waiting for operation " + itoa(op.ID) + " of workflow " + itoa(root.ID) + " to end (RUNNING)"
		if got := hold.Reason(now); got != want {
			t.Fatalf("hold %q, want %q", got, want)
		}
		if st := w.Derive(); st.Status != engine.StatusRunning || st.Current != 1 || st.Reason != "operation 1 'dump' is RUNNING (job "+itoa(op.ID)+")" {
			t.Fatalf("state %+v", st)
		}
		if r.start() != nil {
			t.Fatal("a job of the workflow started beside its running operation")
		}
	})
}

func TestCancelEndsEveryJobAndTheWorkflowIsCancelled(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		ctx := t.Context()
		root := start(t, s, strings.Replace(threeOps, "%s", "stop", 1))
		r := &runner{t: t, s: s}
		r.step() // step 0: dump and step 1 wait
		ids, err := Cancel(ctx, s, root.ID, testActor)
		if err != nil || len(ids) != 2 {
			t.Fatalf("cancelled %v: %v", ids, err)
		}
		w := get(t, s, root.ID)
		if st := w.Derive(); st.Status != engine.StatusCancelled {
			t.Fatalf("state %+v", st)
		}
		if r.start() != nil {
			t.Fatal("a job of a cancelled workflow started")
		}
		if ids, err := Cancel(ctx, s, root.ID, testActor); err != nil || len(ids) != 0 {
			t.Fatalf("cancelling again: %v %v", ids, err)
		}
	})
}

func TestGetRefusesWhatIsNoWorkflow(t *testing.T) {
	s := memstore.New(engine.NewVirtualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	j, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{j.ID, 999} {
		if _, err := Get(t.Context(), s, id); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Get(%d): %v, want not found", id, err)
		}
	}
}

func TestListNewestFirst(t *testing.T) {
	s := memstore.New(engine.NewVirtualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	a := start(t, s, "operations: [{type: noop}]")
	b := start(t, s, "operations: [{type: noop}]")
	r := &runner{t: t, s: s}
	r.all()
	ws, err := List(t.Context(), s, 0)
	if err != nil || len(ws) != 2 || ws[0].Root.ID != b.ID || ws[1].Root.ID != a.ID {
		t.Fatalf("list %v %v", ws, err)
	}
	if ws, _ := List(t.Context(), s, 1); len(ws) != 1 || ws[0].Root.ID != b.ID {
		t.Fatalf("limit 1: %v", ws)
	}
}

func itoa(n int64) string { return engine.WorkflowKey(n)[len("workflow:"):] }

// nextDispatchable is the queued job a dispatcher would take first, of
// whatever type, or nil.
func nextDispatchable(t *testing.T, s engine.Store) *engine.Job {
	t.Helper()
	queues, err := s.JobQueueLoads(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var next *engine.Job
	for _, q := range queues {
		if q.Status != engine.StatusQueued {
			continue
		}
		jobs, err := s.JobListDispatchable(t.Context(), engine.JobDispatchableParams{Status: q.Status, Type: q.Type, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) > 0 && (next == nil || engine.PlaceOf(jobs[0]).Before(engine.PlaceOf(next))) {
			next = jobs[0]
		}
	}
	return next
}

// testActor is the operator of the tests' cancels.
var testActor = engine.Actor{Who: "tester@testhost"}

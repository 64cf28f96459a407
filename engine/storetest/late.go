package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var lateTests = []subtest{
	{"LateResultTakenWhenNothingReplacedTheRun", testLateResultTaken},
	{"LateResultRefusedOnceTheJobMovedOn", testLateResultRefused},
	{"LateResultOnlyFromRestart", testLateResultOnlyFromRestart},
}

// noJitter is the backoff's random source of the tests: the middle of its
// range, for repeatable delays.
func noJitter() float64 { return 0.5 }

// recovered runs a new job (of up to maxAttempts) on node and takes it
// away as the lease holder does from a node gone silent: RESTART, no node,
// its attempt number kept. It returns the job as started and as put back.
func recovered(t *testing.T, s engine.Store, node string, maxAttempts int) (started, back *engine.Job) {
	t.Helper()
	started = start(t, s, insert(t, s, engine.JobInsertParams{MaxAttempts: maxAttempts}), node)
	back = apply(t, s, engine.RecoverUpdate(started, "node "+node+" was silent past its node lease"))
	if back.Status != engine.StatusRestart || back.Node != "" || back.Attempt != started.Attempt {
		t.Fatalf("recovered job: %s on %q at attempt %d; want RESTART, no node, attempt %d",
			back.Status, back.Node, back.Attempt, started.Attempt)
	}
	return started, back
}

// testLateResultTaken: a result that comes back for the attempt a recovery
// put back to RESTART, with no attempt started since, takes the job where
// the result leads: an ending on the run's node, or a retry. The job then
// has one record of that attempt, which says how the run ended, on every
// store; a later run adds its own.
func testLateResultTaken(t *testing.T, s engine.Store) {
	usage := &engine.Usage{CPUSeconds: 1.5, PeakMemory: 7 << 20, WallSeconds: 3}
	for _, c := range []struct {
		name        string
		res         engine.RunResult
		maxAttempts int
		want        engine.Status
		node        string
	}{
		{"succeeded", engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit code 0", Usage: usage}, 1, engine.StatusFinished, "n1"},
		{"warned", engine.RunResult{Outcome: engine.RunSucceededWithWarning, Warning: "disk almost full", Reason: "exit code 0"}, 1, engine.StatusWarning, "n1"},
		{"failed for good", engine.RunResult{Outcome: engine.RunFailed, ExitCode: 3, Reason: "exit code 3", Usage: usage}, 1, engine.StatusFailed, "n1"},
		{"failed with attempts left", engine.RunResult{Outcome: engine.RunFailed, ExitCode: 3, Reason: "exit code 3"}, 3, engine.StatusRestart, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			started, back := recovered(t, s, "n1", c.maxAttempts)
			from := dbNow(t, s)
			got, err := engine.LateOutcome(t.Context(), s, engine.LateRun{JobID: back.ID, Attempt: back.Attempt, Node: "n1", Result: c.res}, noJitter)
			to := dbNow(t, s)
			if err != nil {
				t.Fatalf("LateOutcome: %v", err)
			}
			want := engine.OutcomeUpdate(started, c.res, false, noJitter)
			if got.Status != c.want || got.Node != c.node || got.Attempt != started.Attempt || got.Version != back.Version+1 ||
				!reflect.DeepEqual(got.ExitCode, want.ExitCode) || got.Message != *want.Message {
				t.Errorf("job after the late result: %s on %q attempt %d version %d exit %v %q; want %s on %q attempt %d version %d exit %v %q",
					got.Status, got.Node, got.Attempt, got.Version, got.ExitCode, got.Message,
					c.want, c.node, started.Attempt, back.Version+1, want.ExitCode, *want.Message)
			}
			if c.want == engine.StatusRestart && (got.RunAfter == nil || got.RunAfter.Before(from)) {
				t.Errorf("retry: run after %v, want the outcome's backoff from now", got.RunAfter)
			}
			if stored := get(t, s, back.ID); !reflect.DeepEqual(stored, got) {
				t.Errorf("LateOutcome returned\n %+v\nthe store holds\n %+v", got, stored)
			}
			attempts, err := s.JobAttemptList(t.Context(), back.ID)
			if err != nil {
				t.Fatal(err)
			}
			wantAttempt := engine.Attempt{JobID: back.ID, Attempt: started.Attempt, Node: "n1", StartedAt: started.StartedAt,
				ExitCode: want.ExitCode, Ending: c.want, Message: got.Message, Usage: c.res.Usage}
			if len(attempts) != 1 {
				t.Fatalf("attempts after the late result: %s; want the one run", describeAttempts(attempts))
			}
			a := attempts[0]
			if a.EndedAt == nil || !within(*a.EndedAt, from, to) {
				t.Errorf("the attempt ended at %v, want when its result was taken, within [%s, %s]", a.EndedAt, from, to)
			}
			a.EndedAt = nil
			a.JobID = back.ID
			if !reflect.DeepEqual(a, wantAttempt) {
				t.Errorf("the attempt's record:\n got  %s\n want %s", describeAttempt(a), describeAttempt(wantAttempt))
			}
			if !got.Status.Terminal() {
				return
			}
			// Run again after a requeue: the late attempt stays as it was
			// taken, and the new run is recorded beside it.
			u, err := engine.RequeueUpdate(got)
			if err != nil {
				t.Fatal(err)
			}
			again := finish(t, s, start(t, s, apply(t, s, u), "n2"), engine.RunSucceeded)
			attempts, err = s.JobAttemptList(t.Context(), back.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(attempts) != 2 || attempts[0].Attempt != started.Attempt || attempts[0].Ending != c.want ||
				attempts[0].Node != "n1" || attempts[1].Attempt != again.Attempt || attempts[1].Ending != engine.StatusFinished {
				t.Errorf("attempts after a requeue and a run on n2: %s; want the late one (%s on n1) and the new one",
					describeAttempts(attempts), c.want)
			}
		})
	}
}

// testLateResultRefused: a late result is refused, and the job left as it
// is, once anything replaced the run or moved the job on: another attempt
// started (here or elsewhere), the job was cancelled or paused, it was not
// taken from the result's node, or it is still running.
func testLateResultRefused(t *testing.T, s engine.Store) {
	ok := engine.RunResult{Outcome: engine.RunSucceeded, Reason: "exit code 0"}
	cases := map[string]func() (*engine.Job, engine.LateRun){
		"restarted elsewhere": func() (*engine.Job, engine.LateRun) {
			_, back := recovered(t, s, "n1", 3)
			return start(t, s, back, "n2"), engine.LateRun{JobID: back.ID, Attempt: back.Attempt, Node: "n1", Result: ok}
		},
		"another attempt since, recovered again": func() (*engine.Job, engine.LateRun) {
			_, back := recovered(t, s, "n1", 3)
			again := apply(t, s, engine.RecoverUpdate(start(t, s, back, "n1"), "node n1 was silent"))
			return again, engine.LateRun{JobID: back.ID, Attempt: back.Attempt, Node: "n1", Result: ok}
		},
		"an attempt not made yet": func() (*engine.Job, engine.LateRun) {
			_, back := recovered(t, s, "n1", 3)
			return back, engine.LateRun{JobID: back.ID, Attempt: back.Attempt + 1, Node: "n1", Result: ok}
		},
		"taken from another node": func() (*engine.Job, engine.LateRun) {
			_, back := recovered(t, s, "n2", 3)
			return back, engine.LateRun{JobID: back.ID, Attempt: back.Attempt, Node: "n1", Result: ok}
		},
		"cancelled since": func() (*engine.Job, engine.LateRun) {
			_, back := recovered(t, s, "n1", 3)
			return admin(t, s, back, engine.VerbCancel), engine.LateRun{JobID: back.ID, Attempt: back.Attempt, Node: "n1", Result: ok}
		},
		"paused since": func() (*engine.Job, engine.LateRun) {
			_, back := recovered(t, s, "n1", 3)
			return admin(t, s, back, engine.VerbPause), engine.LateRun{JobID: back.ID, Attempt: back.Attempt, Node: "n1", Result: ok}
		},
		"still running": func() (*engine.Job, engine.LateRun) {
			j := start(t, s, queued(t, s, 1), "n1")
			return j, engine.LateRun{JobID: j.ID, Attempt: j.Attempt, Node: "n1", Result: ok}
		},
		"never ran": func() (*engine.Job, engine.LateRun) {
			j := queued(t, s, 1)
			return j, engine.LateRun{JobID: j.ID, Attempt: 0, Node: "n1", Result: ok}
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			job, run := setup()
			attempts, err := s.JobAttemptList(t.Context(), job.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := engine.LateOutcome(t.Context(), s, run, noJitter)
			if !errors.Is(err, engine.ErrConflict) || got != nil {
				t.Errorf("LateOutcome: %v, %v; want a conflict", got, err)
			}
			if now := get(t, s, job.ID); !reflect.DeepEqual(now, job) {
				t.Errorf("a refused late result changed the job:\n now  %+v\n was  %+v", now, job)
			}
			if now, err := s.JobAttemptList(t.Context(), job.ID); err != nil || !reflect.DeepEqual(now, attempts) {
				t.Errorf("a refused late result changed the attempts: %s, %v; were %s", describeAttempts(now), err, describeAttempts(attempts))
			}
		})
	}
	if _, err := engine.LateOutcome(t.Context(), s, engine.LateRun{JobID: 424242, Attempt: 1, Node: "n1", Result: ok}, noJitter); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("late result of an unknown job: %v; want not found", err)
	}
}

// testLateResultOnlyFromRestart: every store refuses a late result's
// transition from anywhere but RESTART, and the endings of a late result
// without its mark, as the state machine says.
func testLateResultOnlyFromRestart(t *testing.T, s engine.Store) {
	running := start(t, s, queued(t, s, 1), "n1")
	late := engine.JobUpdate{ID: running.ID, From: running.Status, Version: running.Version, To: engine.StatusFinished,
		MarkFinished: true, LateResult: true}
	_, err := s.JobUpdate(t.Context(), late)
	wantErrIs(t, "a late result from RUNNING", err, engine.ErrInvalidTransition)
	_, back := recovered(t, s, "n1", 1)
	plain := engine.JobUpdate{ID: back.ID, From: back.Status, Version: back.Version, To: engine.StatusFinished,
		Node: engine.Ptr("n1"), MarkFinished: true}
	_, err = s.JobUpdate(t.Context(), plain)
	wantErrIs(t, "RESTART → FINISHED without a late result", err, engine.ErrInvalidTransition)
	res, err := s.JobUpdateMany(t.Context(), []engine.JobUpdate{plain})
	if err != nil || len(res) != 1 {
		t.Fatalf("JobUpdateMany: %v, %v", res, err)
	}
	wantErrIs(t, "RESTART → FINISHED without a late result, in a batch", res[0].Err, engine.ErrInvalidTransition)
	for _, j := range []*engine.Job{running, back} {
		if now := get(t, s, j.ID); now.Version != j.Version || now.Status != j.Status {
			t.Errorf("a refused transition changed job %d: %s version %d", j.ID, now.Status, now.Version)
		}
	}
}

package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var attemptTests = []subtest{
	{"JobAttemptsLifecycle", testJobAttemptsLifecycle},
	{"JobAttemptsNoRun", testJobAttemptsNoRun},
	{"JobAttemptsBatch", testJobAttemptsBatch},
	{"JobAttemptsRolledBack", testJobAttemptsRolledBack},
	{"JobAttemptsPurged", testJobAttemptsPurged},
	{"JobAttemptsRecoveredCancel", testJobAttemptsRecoveredCancel},
}

// attemptLog drives jobs through transitions and keeps the attempts
// engine.EndsAttempt and engine.EndedAttempt say each store must record,
// with the window on the database clock in which each one ended.
type attemptLog struct {
	t    *testing.T
	s    engine.Store
	want map[int64][]wantAttempt
}

type wantAttempt struct {
	engine.Attempt
	from, to time.Time // EndedAt lies within
}

func newAttemptLog(t *testing.T, s engine.Store) *attemptLog {
	return &attemptLog{t: t, s: s, want: map[int64][]wantAttempt{}}
}

// step applies u to j, the job as last read, and returns the job after it.
func (l *attemptLog) step(j *engine.Job, u engine.JobUpdate) *engine.Job {
	l.t.Helper()
	from := dbNow(l.t, l.s)
	after := apply(l.t, l.s, u)
	l.expect(j, after, from)
	return after
}

// expect notes the attempt that the transition from before to after,
// applied after from, ended, if any.
func (l *attemptLog) expect(before, after *engine.Job, from time.Time) {
	l.t.Helper()
	if !engine.EndsAttempt(before, after) {
		return
	}
	to := dbNow(l.t, l.s)
	l.want[before.ID] = append(l.want[before.ID], wantAttempt{engine.EndedAttempt(before, after, to), from, to})
}

func (l *attemptLog) start(j *engine.Job, node string) *engine.Job {
	l.t.Helper()
	return l.step(j, engine.QueuedStartUpdate(j, node))
}

func (l *attemptLog) finish(j *engine.Job, outcome engine.RunOutcome) *engine.Job {
	l.t.Helper()
	res := engine.RunResult{Outcome: outcome, Reason: string(outcome)}
	switch outcome {
	case engine.RunFailed:
		res.ExitCode = 1
	case engine.RunCancelled, engine.RunTimedOut:
		res.ExitCode = -1
	}
	return l.step(j, engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
}

func (l *attemptLog) admin(j *engine.Job, v engine.Verb) *engine.Job {
	l.t.Helper()
	u, err := v.Update(j)
	if err != nil {
		l.t.Fatalf("%s job %d: %v", v, j.ID, err)
	}
	return l.step(j, u)
}

// check compares what the store recorded for job id with what the rule says.
func (l *attemptLog) check(what string, id int64) {
	l.t.Helper()
	got, err := l.s.JobAttemptList(l.t.Context(), id)
	if err != nil {
		l.t.Fatalf("%s: JobAttemptList(%d): %v", what, id, err)
	}
	want := l.want[id]
	if len(got) != len(want) {
		l.t.Fatalf("%s: job %d has %d attempts recorded, want %d:\n got  %s\n want %s", what, id, len(got), len(want), describeAttempts(got), describeWanted(want))
	}
	for i, g := range got {
		w := want[i]
		if g.EndedAt == nil || !within(*g.EndedAt, w.from, w.to) {
			l.t.Errorf("%s: job %d attempt %d ended at %v, want within [%s, %s]", what, id, g.Attempt, g.EndedAt, w.from, w.to)
		} else {
			wantUTC(l.t, "EndedAt", *g.EndedAt)
		}
		g.EndedAt, w.EndedAt = nil, nil
		if !reflect.DeepEqual(g, w.Attempt) {
			l.t.Errorf("%s: job %d attempt %d:\n got  %s\n want %s", what, id, g.Attempt, describeAttempt(g), describeAttempt(w.Attempt))
		}
	}
}

func describeAttempt(a engine.Attempt) string {
	exit := "nil"
	if a.ExitCode != nil {
		exit = fmt.Sprint(*a.ExitCode)
	}
	return fmt.Sprintf("{job %d attempt %d node %q started %v ended %v exit %s ending %s message %q}",
		a.JobID, a.Attempt, a.Node, a.StartedAt, a.EndedAt, exit, a.Ending, a.Message)
}

func describeAttempts(as []engine.Attempt) string {
	s := ""
	for _, a := range as {
		s += describeAttempt(a) + " "
	}
	return s
}

func describeWanted(ws []wantAttempt) string {
	s := ""
	for _, w := range ws {
		s += describeAttempt(w.Attempt) + " "
	}
	return s
}

// testJobAttemptsLifecycle takes one job through every way an attempt
// ends or goes on: a failure retried, a run cut short by a lost node, a
// pause and a wait for children within one run, a finish, and after a
// requeue a cancel while running.
func testJobAttemptsLifecycle(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	j := insert(t, s, engine.JobInsertParams{MaxAttempts: 5})

	j = l.start(j, "n1")
	if a := engine.RunningAttempt(j); a == nil || a.Attempt != 1 || a.Node != "n1" || a.EndedAt != nil {
		t.Errorf("running attempt of a started job: %+v, want attempt 1 on n1 with no end", a)
	}
	j = l.finish(j, engine.RunFailed) // attempt 1: RESTART, exit 1
	l.check("after a failure retried", j.ID)

	j = l.start(j, "n2")
	if j.ExitCode != nil {
		t.Errorf("a new attempt starts with exit code %d of the last", *j.ExitCode)
	}
	j = l.step(j, engine.RecoverUpdate(j, "node n2 lost")) // attempt 2: RESTART, no exit code
	l.check("after a recovery from a lost node", j.ID)

	j = l.start(j, "n1")
	j = l.admin(j, engine.VerbPause)
	j = l.admin(j, engine.VerbResume)
	j = l.step(j, waitChildrenUpdate(j))
	j = l.step(j, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusRunning})
	l.check("after a pause and a wait within one run", j.ID)
	j = l.finish(j, engine.RunSucceeded) // attempt 3: FINISHED, exit 0

	j = l.admin(j, engine.VerbRequeue)
	j = l.start(j, "n3")
	j = l.admin(j, engine.VerbCancel)    // CANCELLING: the same attempt
	j = l.finish(j, engine.RunCancelled) // attempt 4: CANCELLED, no exit code
	j = l.admin(j, engine.VerbDelete)    // no run: nothing more
	l.check("after the whole life", j.ID)

	got := l.want[j.ID]
	var endings []engine.Status
	for _, a := range got {
		endings = append(endings, a.Ending)
	}
	want := []engine.Status{engine.StatusRestart, engine.StatusRestart, engine.StatusFinished, engine.StatusCancelled}
	if !reflect.DeepEqual(endings, want) {
		t.Fatalf("the rule gave endings %v, want %v", endings, want)
	}
	if a := got[1]; a.Node != "n2" || a.Message != "node n2 lost" || a.ExitCode != nil {
		t.Errorf("the recovered attempt: %s, want node n2, message \"node n2 lost\", no exit code", describeAttempt(a.Attempt))
	}
}

// testJobAttemptsRecoveredCancel: a job being cancelled when its node is
// lost ends CANCELLED on that node, and its attempt names the node, before
// and after a requeue runs it again elsewhere.
func testJobAttemptsRecoveredCancel(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	j := insert(t, s, engine.JobInsertParams{MaxAttempts: 2})
	j = l.start(j, "n1")
	j = l.admin(j, engine.VerbCancel)
	j = l.step(j, engine.RecoverUpdate(j, "node n1 lost"))
	if j.Status != engine.StatusCancelled || j.Node != "n1" {
		t.Errorf("a cancel recovered from a lost node: %s on %q, want CANCELLED on n1", j.Status, j.Node)
	}
	l.check("after a cancel recovered from a lost node", j.ID)
	if a := l.want[j.ID][0]; a.Node != "n1" || a.Ending != engine.StatusCancelled {
		t.Errorf("the recovered cancel: %s, want node n1, CANCELLED", describeAttempt(a.Attempt))
	}
	j = l.admin(j, engine.VerbRequeue)
	l.check("after its requeue", j.ID)
	j = l.finish(l.start(j, "n2"), engine.RunSucceeded)
	l.check("after it ran again", j.ID)
}

// testJobAttemptsNoRun: a job that never ran on a node, or was paused
// before it ran, has no attempt; a job paused while running and then
// cancelled has one.
func testJobAttemptsNoRun(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	held := l.admin(l.admin(queued(t, s, 1), engine.VerbPause), engine.VerbResume)
	held = l.admin(held, engine.VerbCancel)
	refused := queued(t, s, 1)
	refused = l.step(refused, engine.RefuseUpdate(refused, "n1", "type not offered"))
	for _, j := range []*engine.Job{held, refused} {
		if len(l.want[j.ID]) != 0 {
			t.Fatalf("the rule gave job %d (%s) an attempt: %+v", j.ID, j.Status, l.want[j.ID])
		}
		l.check("a job that never ran", j.ID)
	}

	paused := l.admin(l.start(queued(t, s, 1), "n1"), engine.VerbPause)
	paused = l.admin(paused, engine.VerbCancel)
	paused = l.finish(paused, engine.RunCancelled)
	if len(l.want[paused.ID]) != 1 {
		t.Fatalf("the rule gave a job paused while running, then cancelled, %d attempts, want 1", len(l.want[paused.ID]))
	}
	l.check("a job cancelled while paused on its node", paused.ID)

	if got, err := s.JobAttemptList(t.Context(), 424242); err != nil || len(got) != 0 {
		t.Errorf("JobAttemptList of an unknown job: %v, %v; want none", got, err)
	}
}

// testJobAttemptsBatch: the batched transitions a node and a dispatcher
// make record attempts as single ones do.
func testJobAttemptsBatch(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	jobs := []*engine.Job{
		insert(t, s, engine.JobInsertParams{MaxAttempts: 2}), queued(t, s, 1), queued(t, s, 1), queued(t, s, 1),
	}
	for i, j := range jobs {
		jobs[i] = l.start(j, fmt.Sprintf("n%d", i%2+1))
	}
	results := []engine.RunResult{
		{Outcome: engine.RunFailed, ExitCode: 7, Reason: "exit code 7"},
		{Outcome: engine.RunSucceeded, Reason: ""},
		{Outcome: engine.RunFailed, ExitCode: 2, Reason: "exit code 2"},
	}
	us := make([]engine.JobUpdate, 0, len(jobs))
	for i, res := range results {
		us = append(us, engine.OutcomeUpdate(jobs[i], res, false, func() float64 { return 0.5 }))
	}
	us = append(us, engine.RecoverUpdate(jobs[3], "node n2 was silent"))

	from := dbNow(t, s)
	quiet, err := s.JobUpdateManyQuiet(t.Context(), us[:2])
	if err != nil {
		t.Fatalf("JobUpdateManyQuiet: %v", err)
	}
	loud := updateMany(t, s, us[2:])
	for i, r := range append(quiet, loud...) {
		if r.Err != nil {
			t.Fatalf("batched end of job %d: %v", us[i].ID, r.Err)
		}
	}
	for _, j := range jobs {
		l.expect(j, get(t, s, j.ID), from)
	}
	for _, j := range jobs {
		l.check("after a batch of ends", j.ID)
	}

	// The retried job's next attempt, started and ended in quiet batches.
	retried := get(t, s, jobs[0].ID)
	res, err := s.JobUpdateManyQuiet(t.Context(), []engine.JobUpdate{engine.QueuedStartUpdate(retried, "n2")})
	if err != nil || res[0].Err != nil {
		t.Fatalf("quiet start: %v %v", err, res)
	}
	running := get(t, s, retried.ID)
	from = dbNow(t, s)
	res, err = s.JobUpdateManyQuiet(t.Context(), []engine.JobUpdate{engine.OutcomeUpdate(running,
		engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 })})
	if err != nil || res[0].Err != nil {
		t.Fatalf("quiet finish: %v %v", err, res)
	}
	l.expect(running, get(t, s, retried.ID), from)
	l.check("after quiet batches", retried.ID)
}

// testJobAttemptsRolledBack: an attempt ended in a transaction rolled back
// was never ended.
func testJobAttemptsRolledBack(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	j := l.start(queued(t, s, 1), "n1")
	errUndo := errors.New("undo")
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		finish(t, tx, j, engine.RunSucceeded)
		if got, err := tx.JobAttemptList(t.Context(), j.ID); err != nil || len(got) != 1 {
			t.Errorf("inside the transaction: %d attempts, %v; want the one it ended", len(got), err)
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) {
		t.Fatalf("Tx: %v", err)
	}
	l.check("after a rolled-back end", j.ID)
	_, attempts, err := engine.JobAttempts(t.Context(), s, j.ID)
	if err != nil {
		t.Fatalf("JobAttempts: %v", err)
	}
	if len(attempts) != 1 || attempts[0].EndedAt != nil || attempts[0].Attempt != 1 || attempts[0].Node != "n1" {
		t.Errorf("JobAttempts of a running job: %s, want its running attempt alone", describeAttempts(attempts))
	}
	j = l.finish(get(t, s, j.ID), engine.RunSucceeded)
	_, attempts, err = engine.JobAttempts(t.Context(), s, j.ID)
	if err != nil || len(attempts) != 1 || attempts[0].EndedAt == nil {
		t.Errorf("JobAttempts of an ended job: %s, %v; want its one ended attempt", describeAttempts(attempts), err)
	}
	if _, _, err := engine.JobAttempts(t.Context(), s, 424242); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("JobAttempts of an unknown job: %v, want ErrNotFound", err)
	}
}

// testJobAttemptsPurged: a purged job's attempts go with it.
func testJobAttemptsPurged(t *testing.T, s engine.Store) {
	l := newAttemptLog(t, s)
	gone := l.finish(l.start(queued(t, s, 1), "n1"), engine.RunSucceeded)
	kept := l.start(queued(t, s, 1), "n1")
	kept = l.finish(kept, engine.RunFailed)
	l.check("before the purge", gone.ID)
	if n := purge(t, s, engine.JobPurgeParams{Statuses: []engine.Status{engine.StatusFinished}}); n != 1 {
		t.Fatalf("purged %d jobs, want 1", n)
	}
	delete(l.want, gone.ID)
	l.check("after the purge", gone.ID)
	l.check("a job the purge left", kept.ID)
}

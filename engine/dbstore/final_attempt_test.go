package dbstore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// finalAttemptVersion is migration 016_final_attempt, which keeps an ended
// job's final attempt on its row instead of also in job_attempts.
const finalAttemptVersion = 16

func TestSQLiteFinalAttemptMigration(t *testing.T) {
	t.Parallel()
	testFinalAttemptMigration(t, migrated(t, openSQLite(t, t.TempDir()+"/final.db")))
}

func TestPostgresFinalAttemptMigration(t *testing.T) {
	t.Parallel()
	testFinalAttemptMigration(t, migrated(t, openStore(t, postgresSchemaDSN(t))))
}

func TestMySQLFinalAttemptMigration(t *testing.T) {
	t.Parallel()
	testFinalAttemptMigration(t, migrated(t, openStore(t, mysqlDatabaseDSN(t))))
}

// copiedAttempt is a row of job_attempts as the test reads it.
type copiedAttempt struct {
	JobID   int64  `db:"job_id"`
	Attempt int    `db:"attempt"`
	Ending  string `db:"ending"`
	Node    string `db:"node"`
}

func (a copiedAttempt) String() string {
	return fmt.Sprintf("%d/%d %s on %q", a.JobID, a.Attempt, a.Ending, a.Node)
}

// finalAttemptHarness drives jobs through their runs on one store.
type finalAttemptHarness struct {
	t *testing.T
	s *Store
}

func (h finalAttemptHarness) apply(u engine.JobUpdate) *engine.Job {
	h.t.Helper()
	j, err := h.s.JobUpdate(h.t.Context(), u)
	if err != nil {
		h.t.Fatalf("%s → %s of job %d: %v", u.From, u.To, u.ID, err)
	}
	return j
}

func (h finalAttemptHarness) submit(typ string) *engine.Job {
	h.t.Helper()
	j, err := h.s.JobInsert(h.t.Context(), engine.JobInsertParams{Type: typ, Load: 1, Status: engine.StatusQueued,
		MaxAttempts: 3})
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// start hands j to node and starts its next attempt there.
func (h finalAttemptHarness) start(j *engine.Job, node string) *engine.Job {
	h.t.Helper()
	return h.apply(engine.QueuedStartUpdate(j, node))
}

// end records the result of j's running attempt, measured as cpu seconds.
func (h finalAttemptHarness) end(j *engine.Job, outcome engine.RunOutcome, exit int, cpu float64) *engine.Job {
	h.t.Helper()
	res := engine.RunResult{ExitCode: exit, Outcome: outcome, Reason: fmt.Sprintf("exit code %d", exit),
		Usage: &engine.Usage{CPUSeconds: cpu, PeakMemory: int64(cpu * 1e6), WallSeconds: cpu * 2}}
	return h.apply(engine.OutcomeUpdate(j, res, false, func() float64 { return 0.5 }))
}

// copied lists job_attempts as it is.
func (h finalAttemptHarness) copied() []string {
	h.t.Helper()
	var rows []copiedAttempt
	err := h.s.db.SelectContext(h.t.Context(), &rows,
		"SELECT job_id, attempt, ending, node FROM job_attempts ORDER BY job_id, attempt")
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	return out
}

func (h finalAttemptHarness) wantCopied(when string, want ...copiedAttempt) {
	h.t.Helper()
	wantText := make([]string, len(want))
	for i, w := range want {
		wantText[i] = w.String()
	}
	if got := h.copied(); !slices.Equal(got, wantText) {
		h.t.Errorf("%s: job_attempts holds\n  %q\nwant\n  %q", when, got, wantText)
	}
}

// attempts reads a job's attempts as show does, each without its end time,
// which the trigger of 014 took from the clock and the row takes from the
// job's end; wantEnds checks those on their own.
func (h finalAttemptHarness) attempts(id int64) []engine.Attempt {
	h.t.Helper()
	list, err := h.s.JobAttemptList(h.t.Context(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := range list {
		if list[i].EndedAt == nil {
			h.t.Errorf("job %d attempt %d has no end", id, list[i].Attempt)
		}
		list[i].EndedAt = nil
	}
	return list
}

// usage reads the measured attempts of every type, and of each named
// type, as the usage commands do, each as "job/attempt type cpu".
func (h finalAttemptHarness) usage(types ...string) []string {
	h.t.Helper()
	var out []string
	for _, p := range []engine.JobAttemptUsageParams{{Runs: 10}, {Runs: 10, Types: types}, {Runs: 1, Types: types}} {
		list, err := h.s.JobAttemptUsageList(h.t.Context(), p)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, u := range list {
			out = append(out, fmt.Sprintf("runs %d: %d/%d %s %.1f", p.Runs, u.JobID, u.Attempt, u.Type, u.Usage.CPUSeconds))
		}
		out = append(out, "|")
	}
	return out
}

func (h finalAttemptHarness) migrateTo(version int) {
	h.t.Helper()
	var err error
	if version == finalAttemptVersion {
		err = h.s.Migrate(h.t.Context())
	} else {
		err = h.s.MigrateDown(h.t.Context(), version)
	}
	if err != nil {
		h.t.Fatalf("migrate to %d: %v", version, err)
	}
}

// testFinalAttemptMigration applies migration 016 to a history that the
// trigger of 014 wrote, reverts it and applies it again: the copies of
// final attempts go and come back, and every list of attempts and of
// measured use reads the same throughout. Jobs ended under 016 keep their
// final attempt on the row only, and a requeue puts it into job_attempts
// before the job runs again.
func testFinalAttemptMigration(t *testing.T, s *Store) {
	h := finalAttemptHarness{t: t, s: s}
	h.migrateTo(finalAttemptVersion - 1)

	// Under 014: one run finished on n1; a retry on n1 then a final
	// failure on n2; a run cancelled while its node was lost, whose ending
	// cleared the node (as recovery did); a job cancelled in the queue.
	finished := h.end(h.start(h.submit("build"), "n1"), engine.RunSucceeded, 0, 1.5)
	retried := h.end(h.start(h.submit("build"), "n1"), engine.RunFailed, 3, 2.5)
	retried = h.end(h.start(retried, "n2"), engine.RunFailedFinally, 4, 3.5)
	lost := h.apply(h.must(engine.CancelUpdate(h.start(h.submit("test"), "n3"))))
	lost = h.apply(engine.JobUpdate{ID: lost.ID, From: lost.Status, Version: lost.Version,
		To: engine.StatusCancelled, Node: engine.Ptr(""), MarkFinished: true, Message: engine.Ptr("cancelled; node n3 lost")})
	queued := h.apply(h.must(engine.CancelUpdate(h.submit("test"))))
	if retried.Status != engine.StatusFailed || lost.Node != "" || queued.Attempt != 0 {
		t.Fatalf("setup: retried %s, lost on %q, queued attempt %d", retried.Status, lost.Node, queued.Attempt)
	}
	ids := []int64{finished.ID, retried.ID, lost.ID, queued.ID}
	before := map[int64][]engine.Attempt{}
	for _, id := range ids {
		before[id] = h.attempts(id)
	}
	// The measured runs, newest first, as the trigger of 014 recorded
	// them (the queries of this jobctl read the schema of 016, so they are
	// written out here): the cancel was not measured.
	b := func(runs int, j *engine.Job, attempt int, cpu float64) string {
		return fmt.Sprintf("runs %d: %d/%d build %.1f", runs, j.ID, attempt, cpu)
	}
	usageBefore := []string{b(10, retried, 2, 3.5), b(10, retried, 1, 2.5), b(10, finished, 1, 1.5), "|",
		b(10, retried, 2, 3.5), b(10, retried, 1, 2.5), b(10, finished, 1, 1.5), "|", b(1, retried, 2, 3.5), "|"}
	all014 := []copiedAttempt{
		{finished.ID, 1, "FINISHED", "n1"},
		{retried.ID, 1, "RESTART", "n1"}, {retried.ID, 2, "FAILED", "n2"},
		{lost.ID, 1, "CANCELLED", "n3"},
	}
	h.wantCopied("under 014", all014...)

	h.migrateTo(finalAttemptVersion)
	kept016 := []copiedAttempt{{retried.ID, 1, "RESTART", "n1"}, {lost.ID, 1, "CANCELLED", "n3"}}
	h.wantCopied("after 016 removed the copies its rows hold", kept016...)
	h.wantSame(ids, before, usageBefore, "build", "test")
	h.wantEnds(finished, retried)

	// Under 016: a run ends on its row only, and a recovered cancel keeps
	// its node there.
	fresh := h.end(h.start(h.submit("build"), "n4"), engine.RunSucceeded, 0, 4.5)
	recovered := h.apply(h.must(engine.CancelUpdate(h.start(h.submit("test"), "n5"))))
	recovered = h.apply(engine.RecoverUpdate(recovered, "node n5 lost"))
	h.wantCopied("after runs ended under 016", kept016...)
	if got := h.attempts(fresh.ID); len(got) != 1 || got[0].Node != "n4" || got[0].Ending != engine.StatusFinished ||
		got[0].Usage == nil || got[0].Usage.CPUSeconds != 4.5 || *got[0].ExitCode != 0 {
		t.Errorf("attempts of a job ended under 016 = %+v, want its one finished run on n4", got)
	}
	if got := h.attempts(recovered.ID); len(got) != 1 || got[0].Node != "n5" || got[0].Ending != engine.StatusCancelled {
		t.Errorf("attempts of a recovered cancel = %+v, want its run on n5, cancelled", got)
	}

	// A requeue of a finished job copies its final attempt before the next
	// run starts; the run after it ends on the row again.
	requeued := h.apply(h.must(engine.RequeueUpdate(finished)))
	h.wantCopied("after a requeue", copiedAttempt{finished.ID, 1, "FINISHED", "n1"}, kept016[0], kept016[1])
	requeued = h.end(h.start(requeued, "n6"), engine.RunFailed, 9, 5.5)
	requeued = h.end(h.start(requeued, "n6"), engine.RunSucceeded, 0, 6.5)
	got := h.attempts(requeued.ID)
	wantRuns := []string{"1 n1 FINISHED", "2 n6 RESTART", "3 n6 FINISHED"}
	var gotRuns []string
	for _, a := range got {
		gotRuns = append(gotRuns, fmt.Sprintf("%d %s %s", a.Attempt, a.Node, a.Ending))
	}
	if !slices.Equal(gotRuns, wantRuns) || !attemptEqual(got[0], before[finished.ID][0]) {
		t.Errorf("attempts after a requeue = %q (first %+v), want %q, the first as before (%+v)",
			gotRuns, got[0], wantRuns, before[finished.ID][0])
	}
	// A delete of an ended job copies its final attempt too.
	deleted := h.apply(h.must(engine.DeleteUpdate(fresh)))
	if got := h.attempts(deleted.ID); len(got) != 1 || got[0].Ending != engine.StatusFinished || got[0].Node != "n4" {
		t.Errorf("attempts of a deleted job = %+v, want its finished run on n4", got)
	}

	// Reverting 016 puts every final attempt back into job_attempts, and
	// the trigger of 014 copies them again.
	ids = append(ids, fresh.ID, recovered.ID)
	before = map[int64][]engine.Attempt{}
	for _, id := range ids {
		before[id] = h.attempts(id)
	}
	h.migrateTo(finalAttemptVersion - 1)
	all := []copiedAttempt{
		{finished.ID, 1, "FINISHED", "n1"}, {finished.ID, 2, "RESTART", "n6"}, {finished.ID, 3, "FINISHED", "n6"},
		{retried.ID, 1, "RESTART", "n1"}, {retried.ID, 2, "FAILED", "n2"},
		{lost.ID, 1, "CANCELLED", "n3"},
		{fresh.ID, 1, "FINISHED", "n4"},
		{recovered.ID, 1, "CANCELLED", "n5"},
	}
	h.wantCopied("after reverting 016", all...)
	late := h.end(h.start(h.submit("build"), "n7"), engine.RunSucceeded, 0, 7.5)
	h.wantCopied("after a run ended under 014 again", append(all, copiedAttempt{late.ID, 1, "FINISHED", "n7"})...)

	h.migrateTo(finalAttemptVersion)
	h.wantCopied("after 016 once more",
		copiedAttempt{finished.ID, 1, "FINISHED", "n1"}, copiedAttempt{finished.ID, 2, "RESTART", "n6"},
		copiedAttempt{retried.ID, 1, "RESTART", "n1"}, copiedAttempt{lost.ID, 1, "CANCELLED", "n3"},
		copiedAttempt{fresh.ID, 1, "FINISHED", "n4"})
	h.wantSameAttempts(ids, before)
	usageAfter := h.usage("build", "test")
	if !slices.Contains(usageAfter, fmt.Sprintf("runs 10: %d/1 build 7.5", late.ID)) ||
		!slices.Contains(usageAfter, fmt.Sprintf("runs 1: %d/1 build 7.5", late.ID)) {
		t.Errorf("measured use after 016 once more = %q, want the newest build on job %d", usageAfter, late.ID)
	}
	if got := h.attempts(late.ID); len(got) != 1 || got[0].Node != "n7" || got[0].Usage == nil {
		t.Errorf("attempts of the job ended under 014 = %+v, want its run on n7", got)
	}
}

// wantSame checks the attempts of ids and the measured use read as before.
func (h finalAttemptHarness) wantSame(ids []int64, before map[int64][]engine.Attempt, usageBefore []string, types ...string) {
	h.t.Helper()
	h.wantSameAttempts(ids, before)
	if got := h.usage(types...); !slices.Equal(got, usageBefore) {
		h.t.Errorf("measured use:\n  %q\nwant as before\n  %q", got, usageBefore)
	}
}

// wantSameAttempts checks the attempts of ids read as before.
func (h finalAttemptHarness) wantSameAttempts(ids []int64, before map[int64][]engine.Attempt) {
	h.t.Helper()
	for _, id := range ids {
		got := h.attempts(id)
		if !slices.EqualFunc(got, before[id], attemptEqual) {
			h.t.Errorf("attempts of job %d:\n  %+v\nwant as before\n  %+v", id, got, before[id])
		}
	}
}

// wantEnds checks that the final attempt of each ended job read from its
// row ends when the job did.
func (h finalAttemptHarness) wantEnds(jobs ...*engine.Job) {
	h.t.Helper()
	for _, j := range jobs {
		list, err := h.s.JobAttemptList(h.t.Context(), j.ID)
		if err != nil {
			h.t.Fatal(err)
		}
		last := list[len(list)-1]
		if last.EndedAt == nil || j.FinishedAt == nil || !last.EndedAt.Equal(*j.FinishedAt) {
			h.t.Errorf("job %d: final attempt ends %v, want the job's end %v", j.ID, last.EndedAt, j.FinishedAt)
		}
	}
}

func attemptEqual(a, b engine.Attempt) bool {
	return a.Attempt == b.Attempt && a.Node == b.Node && a.Ending == b.Ending && a.Message == b.Message &&
		equalPtr(a.ExitCode, b.ExitCode) && equalPtr(a.Usage, b.Usage) &&
		(a.StartedAt == nil) == (b.StartedAt == nil) && (a.StartedAt == nil || a.StartedAt.Equal(*b.StartedAt))
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// must takes the update an engine rule made, or fails the test.
func (h finalAttemptHarness) must(u engine.JobUpdate, err error) engine.JobUpdate {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	return u
}

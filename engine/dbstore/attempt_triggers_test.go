package dbstore

import (
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestSQLiteAttemptRecords(t *testing.T) {
	t.Parallel()
	testAttemptRecords(t, migrated(t, openSQLite(t, t.TempDir()+"/records.db")))
}

func TestPostgresAttemptRecords(t *testing.T) {
	t.Parallel()
	testAttemptRecords(t, migrated(t, openStore(t, postgresSchemaDSN(t))))
}

func TestMySQLAttemptRecords(t *testing.T) {
	t.Parallel()
	testAttemptRecords(t, migrated(t, openStore(t, mysqlDatabaseDSN(t))))
}

// testAttemptRecords drives, in the same batches, a job through each kind
// of write that records an attempt in job_attempts (an attempt the job
// goes on from, the final attempt of a job moved on, a late result taken)
// and one through the starts and finishes that record none: each batch
// records exactly what its writes call for, whatever else it holds.
func testAttemptRecords(t *testing.T, s *Store) {
	h := finalAttemptHarness{t: t, s: s}
	many := func(us ...engine.JobUpdate) []*engine.Job {
		t.Helper()
		res, err := s.JobUpdateMany(t.Context(), us)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]*engine.Job, len(res))
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("%s → %s of job %d: %v", us[i].From, us[i].To, us[i].ID, r.Err)
			}
			out[i] = r.Job
		}
		return out
	}
	result := func(outcome engine.RunOutcome, exit int) engine.RunResult {
		return engine.RunResult{ExitCode: exit, Outcome: outcome, Reason: "done",
			Usage: &engine.Usage{CPUSeconds: 1, PeakMemory: 1e6, WallSeconds: 2}}
	}
	half := func() float64 { return 0.5 }

	retried, ended, lost, plain := h.submit("t"), h.submit("t"), h.submit("t"), h.submit("t")
	js := many(engine.QueuedStartUpdate(retried, "n1"), engine.QueuedStartUpdate(ended, "n1"),
		engine.QueuedStartUpdate(lost, "n1"), engine.QueuedStartUpdate(plain, "n1"))
	retried, ended, lost, plain = js[0], js[1], js[2], js[3]
	h.wantCopied("after the starts")

	js = many(engine.OutcomeUpdate(retried, result(engine.RunFailed, 1), false, half),
		engine.OutcomeUpdate(ended, result(engine.RunSucceeded, 0), false, half),
		engine.RecoverUpdate(lost, "n1 is gone"),
		engine.OutcomeUpdate(plain, result(engine.RunSucceeded, 0), false, half))
	retried, ended, lost, plain = js[0], js[1], js[2], js[3]
	if retried.Status != engine.StatusRestart || ended.Status != engine.StatusFinished ||
		lost.Status != engine.StatusRestart || plain.Status != engine.StatusFinished {
		t.Fatalf("after the ends: %s %s %s %s; want RESTART FINISHED RESTART FINISHED",
			retried.Status, ended.Status, lost.Status, plain.Status)
	}
	h.wantCopied("after the ends",
		copiedAttempt{retried.ID, 1, "RESTART", "n1"}, copiedAttempt{lost.ID, 1, "RESTART", "n1"})

	requeue, err := engine.RequeueUpdate(ended)
	if err != nil {
		t.Fatal(err)
	}
	late := engine.LateOutcomeUpdate(lost, engine.LateRun{JobID: lost.ID, Attempt: 1, Node: "n1",
		Result: result(engine.RunSucceeded, 0)}, half)
	js = many(requeue, late)
	if js[1].Status != engine.StatusFinished || js[1].Node != "n1" {
		t.Fatalf("late result: %s on %q; want FINISHED on n1", js[1].Status, js[1].Node)
	}
	h.wantCopied("after the requeue and the late result",
		copiedAttempt{retried.ID, 1, "RESTART", "n1"}, copiedAttempt{ended.ID, 1, "FINISHED", "n1"},
		copiedAttempt{lost.ID, 1, "FINISHED", "n1"})
}

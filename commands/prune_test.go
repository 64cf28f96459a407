package commands

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// laterStore reads the database clock ahead by some time, so jobs that
// ended a moment ago are that much older to a prune.
type laterStore struct {
	engine.Store
	by time.Duration
}

func (s laterStore) Now(ctx context.Context) (time.Time, error) {
	now, err := s.Store.Now(ctx)
	return now.Add(s.by), err
}

// pruneFixture has a FINISHED job with a log, a FAILED and a CANCELLED
// job, a running and a queued one, all two hours old to prune.
type pruneFixture struct {
	*testEnv
	done, failed, cancelled, running, queued *engine.Job
}

func newPruneFixture(t *testing.T) *pruneFixture {
	t.Helper()
	e := newTestEnv(t)
	p := &pruneFixture{testEnv: e}
	p.done = e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	p.failed = e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFailed)
	p.cancelled = e.insert(t, engine.JobInsertParams{})
	u, err := engine.VerbCancel.Update(p.cancelled)
	if err != nil {
		t.Fatal(err)
	}
	if p.cancelled, err = e.store.JobUpdate(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	p.running = e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	p.queued = e.insert(t, engine.JobInsertParams{})
	if err := e.store.JobLogAppend(t.Context(), engine.JobLogAppendParams{JobID: p.done.ID, Attempt: 1, Data: []byte("done\n")}); err != nil {
		t.Fatal(err)
	}
	store := laterStore{Store: e.store, by: 2 * time.Hour}
	e.f.Store = func(context.Context) (engine.Store, error) { return store, nil }
	return p
}

// wantLeft checks that of the fixture's jobs exactly kept still exist.
func (p *pruneFixture) wantLeft(t *testing.T, what string, kept ...*engine.Job) {
	t.Helper()
	keep := map[int64]bool{}
	for _, j := range kept {
		keep[j.ID] = true
	}
	for _, j := range []*engine.Job{p.done, p.failed, p.cancelled, p.running, p.queued} {
		_, err := p.store.JobGet(t.Context(), j.ID)
		switch {
		case keep[j.ID] && err != nil:
			t.Errorf("%s: job %d (%s) should stay: %v", what, j.ID, j.Status, err)
		case !keep[j.ID] && !errors.Is(err, engine.ErrNotFound):
			t.Errorf("%s: job %d (%s) should be gone, JobGet says %v", what, j.ID, j.Status, err)
		}
	}
}

func TestPruneDeletesOldEndedJobs(t *testing.T) {
	p := newPruneFixture(t)
	if err := p.run(t, "prune", "--older-than", "1h"); err != nil {
		t.Fatal(err)
	}
	if got := p.stdout.String(); !strings.HasPrefix(got, "deleted 3 jobs that ended before ") {
		t.Errorf("stdout %q, want the count of deleted jobs", got)
	}
	p.wantLeft(t, "prune --older-than 1h", p.running, p.queued)
	if logs, err := p.store.JobLogList(t.Context(), engine.JobLogListParams{JobID: p.done.ID}); err != nil || len(logs) != 0 {
		t.Errorf("log of a pruned job: %v, %v; want none", logs, err)
	}
}

func TestPruneYoungJobsStay(t *testing.T) {
	p := newPruneFixture(t)
	if err := p.run(t, "prune", "--older-than", "1d", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got pruneResult
	if err := json.Unmarshal(p.stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v in %q", err, p.stdout)
	}
	if got.Removed != 0 || got.OlderThan != "24h0m0s" || got.DryRun {
		t.Errorf("json %+v, want 0 removed older than 24h0m0s", got)
	}
	p.wantLeft(t, "prune --older-than 1d", p.done, p.failed, p.cancelled, p.running, p.queued)
}

func TestPruneDryRun(t *testing.T) {
	p := newPruneFixture(t)
	if err := p.run(t, "prune", "--older-than", "90m", "--dry-run", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(p.stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v in %q", err, p.stdout)
	}
	if got["removed"] != 3.0 || got["older_than"] != "1h30m0s" || got["dry_run"] != true || got["finished_before"] == nil {
		t.Errorf("json %v, want 3 removed, older_than 1h30m0s, a dry run", got)
	}
	p.wantLeft(t, "dry run", p.done, p.failed, p.cancelled, p.running, p.queued)

	if err := p.run(t, "prune", "--older-than", "90m", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if got := p.stdout.String(); !strings.HasPrefix(got, "would delete 3 jobs that ended before ") {
		t.Errorf("stdout %q, want the count of jobs a prune would delete", got)
	}
}

func TestPruneStates(t *testing.T) {
	p := newPruneFixture(t)
	if err := p.run(t, "prune", "--older-than", "1h", "--state", "FAILED,cancelled"); err != nil {
		t.Fatal(err)
	}
	if got := p.stdout.String(); !strings.HasPrefix(got, "deleted 2 jobs ") {
		t.Errorf("stdout %q, want 2 deleted", got)
	}
	p.wantLeft(t, "prune --state failed,cancelled", p.done, p.running, p.queued)
	if err := p.run(t, "prune", "--older-than", "1h", "--state", "finished", "--state", "deleted"); err != nil {
		t.Fatal(err)
	}
	p.wantLeft(t, "prune --state finished --state deleted", p.running, p.queued)
}

func TestPruneUsageErrors(t *testing.T) {
	p := newPruneFixture(t)
	for _, args := range [][]string{
		{"prune"},
		{"prune", "--dry-run"},
		{"prune", "--older-than", "0"},
		{"prune", "--older-than", "0s"},
		{"prune", "--older-than", "-1h"},
		{"prune", "--older-than", ""},
		{"prune", "--older-than", "soon"},
		{"prune", "--older-than", "1h", "--state", "running"},
		{"prune", "--older-than", "1h", "--state", "finished,queued"},
		{"prune", "--older-than", "1h", "--state", "gone"},
		{"prune", "--older-than", "1h", "-o", "yaml"},
		{"prune", "--older-than", "1h", "42"},
	} {
		err := p.run(t, args...)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		} else if msg := err.Error(); strings.Contains(msg, "\n") {
			t.Errorf("%v: the error %q is more than one line", args, msg)
		}
		if p.stdout.Len() != 0 {
			t.Errorf("%v printed %q", args, p.stdout)
		}
	}
	p.wantLeft(t, "refused prunes", p.done, p.failed, p.cancelled, p.running, p.queued)
}

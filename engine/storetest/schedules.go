package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var scheduleTests = []subtest{
	{"ScheduleAddGetListDelete", testScheduleCRUD},
	{"SchedulePauseResume", testSchedulePause},
	{"ScheduleDueAndGuardedAdvance", testScheduleAdvance},
	{"ScheduleConcurrentFiresCreateOneJob", testScheduleFireRace},
	{"ScheduleAdvanceRollsBackWithTx", testScheduleTxRollback},
}

// addSchedule stores a schedule of noop jobs that next fires at next.
func addSchedule(t *testing.T, s engine.Store, name string, next time.Time) *engine.Schedule {
	t.Helper()
	sc, err := s.ScheduleAdd(t.Context(), engine.ScheduleAddParams{
		Name: name, Cron: "@every 1m", TZ: "UTC", Overlap: engine.OverlapAllow, NextFireAt: next, Creator: "alice@host",
		Job: engine.JobTemplate{Type: engine.TypeNoop, Args: []string{"a", "b"}, Load: engine.Ptr(2.5), MaxAttempts: 3,
			Backoff: engine.Duration(time.Second), Timeout: engine.Ptr(engine.Duration(time.Minute)), Key: "k"},
	})
	if err != nil {
		t.Fatalf("ScheduleAdd(%s): %v", name, err)
	}
	return sc
}

func names(scs []*engine.Schedule) []string {
	out := make([]string, len(scs))
	for i, sc := range scs {
		out[i] = sc.Name
	}
	return out
}

func wantNames(t *testing.T, what string, scs []*engine.Schedule, want ...string) {
	t.Helper()
	got := names(scs)
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

func testScheduleCRUD(t *testing.T, s engine.Store) {
	ctx := t.Context()
	next := dbNow(t, s).Add(time.Hour).Truncate(time.Second)
	b := addSchedule(t, s, "b", next)
	addSchedule(t, s, "a", next)
	if b.Name != "b" || b.Cron != "@every 1m" || b.TZ != "UTC" || b.Overlap != engine.OverlapAllow || b.Paused ||
		!b.NextFireAt.Equal(next) || b.LastJobID != nil || b.Creator != "alice@host" {
		t.Errorf("added schedule = %+v", b)
	}
	wantUTC(t, "created_at", b.CreatedAt)
	wantUTC(t, "next_fire_at", b.NextFireAt)
	if j := b.Job; j.Type != engine.TypeNoop || len(j.Args) != 2 || j.Load == nil || *j.Load != 2.5 || j.MaxAttempts != 3 ||
		j.Key != "k" || j.Timeout == nil || *j.Timeout != engine.Duration(time.Minute) || string(j.Payload) != "{}" {
		t.Errorf("added template = %+v", j)
	}
	_, err := s.ScheduleAdd(ctx, engine.ScheduleAddParams{Name: "a", Cron: "@hourly", TZ: "UTC",
		Overlap: engine.OverlapSkip, NextFireAt: next, Job: engine.JobTemplate{Type: engine.TypeNoop}})
	wantErrIs(t, "adding a name taken", err, engine.ErrConflict)
	_, err = s.ScheduleAdd(ctx, engine.ScheduleAddParams{Name: "c", Cron: "@hourly", TZ: "UTC",
		Overlap: "sometimes", NextFireAt: next, Job: engine.JobTemplate{Type: engine.TypeNoop}})
	wantErrIs(t, "adding with a bad overlap", err, engine.ErrInvalid)

	got, err := s.ScheduleGet(ctx, "b")
	if err != nil || got.Name != "b" || !got.NextFireAt.Equal(next) || got.Job.Key != "k" {
		t.Errorf("ScheduleGet(b) = %+v, %v", got, err)
	}
	_, err = s.ScheduleGet(ctx, "nope")
	wantErrIs(t, "getting an unknown schedule", err, engine.ErrNotFound)
	all, err := s.ScheduleList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantNames(t, "list", all, "a", "b")

	if err := s.ScheduleDelete(ctx, "a"); err != nil {
		t.Fatalf("ScheduleDelete(a): %v", err)
	}
	wantErrIs(t, "deleting it again", s.ScheduleDelete(ctx, "a"), engine.ErrNotFound)
	all, _ = s.ScheduleList(ctx)
	wantNames(t, "list after delete", all, "b")
}

func testSchedulePause(t *testing.T, s engine.Store) {
	ctx := t.Context()
	past := dbNow(t, s).Add(-time.Hour).Truncate(time.Second)
	addSchedule(t, s, "p", past)
	addSchedule(t, s, "q", past.Add(time.Second))
	due, err := s.ScheduleListDue(ctx, engine.ScheduleDueParams{})
	if err != nil {
		t.Fatal(err)
	}
	wantNames(t, "due, earliest first", due, "p", "q")
	due, _ = s.ScheduleListDue(ctx, engine.ScheduleDueParams{Limit: 1})
	wantNames(t, "due with a limit", due, "p")

	sc, err := s.ScheduleSetPaused(ctx, engine.ScheduleSetPausedParams{Name: "p", Paused: true})
	if err != nil || !sc.Paused || !sc.NextFireAt.Equal(past) {
		t.Fatalf("pause = %+v, %v; want paused, fire time kept", sc, err)
	}
	due, _ = s.ScheduleListDue(ctx, engine.ScheduleDueParams{})
	wantNames(t, "due while p is paused", due, "q")
	_, err = s.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: "p", From: past, Next: past.Add(time.Hour)})
	wantErrIs(t, "advancing a paused schedule", err, engine.ErrConflict)

	later := past.Add(3 * time.Hour)
	sc, err = s.ScheduleSetPaused(ctx, engine.ScheduleSetPausedParams{Name: "p", NextFireAt: later})
	if err != nil || sc.Paused || !sc.NextFireAt.Equal(later) {
		t.Fatalf("resume = %+v, %v; want running, next fire %s", sc, err, later)
	}
	_, err = s.ScheduleSetPaused(ctx, engine.ScheduleSetPausedParams{Name: "nope", Paused: true})
	wantErrIs(t, "pausing an unknown schedule", err, engine.ErrNotFound)
}

func testScheduleAdvance(t *testing.T, s engine.Store) {
	ctx := t.Context()
	from := dbNow(t, s).Add(-time.Minute).Truncate(time.Second)
	addSchedule(t, s, "s", from)
	job := queued(t, s, 1)
	next := from.Add(2 * time.Minute)

	_, err := s.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: "s", From: from.Add(time.Second), Next: next})
	wantErrIs(t, "advancing from a time it does not fire at", err, engine.ErrConflict)
	sc, err := s.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: "s", From: from, Next: next, LastJobID: &job.ID})
	if err != nil {
		t.Fatalf("ScheduleAdvance: %v", err)
	}
	if !sc.NextFireAt.Equal(next) || sc.LastJobID == nil || *sc.LastJobID != job.ID {
		t.Errorf("advanced = next %s, last %v; want %s, %d", sc.NextFireAt, sc.LastJobID, next, job.ID)
	}
	_, err = s.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: "s", From: from, Next: next.Add(time.Minute)})
	wantErrIs(t, "advancing past the same fire twice", err, engine.ErrConflict)
	// Without a job the last one stays (a fire passed over).
	sc, err = s.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: "s", From: next, Next: next.Add(time.Minute)})
	if err != nil || sc.LastJobID == nil || *sc.LastJobID != job.ID {
		t.Errorf("advance without a job = %+v, %v; want last job %d kept", sc, err, job.ID)
	}
	due, _ := s.ScheduleListDue(ctx, engine.ScheduleDueParams{})
	wantNames(t, "due once moved to the future", due)
	_, err = s.ScheduleAdvance(ctx, engine.ScheduleAdvanceParams{Name: "gone", From: from, Next: next})
	wantErrIs(t, "advancing an unknown schedule", err, engine.ErrConflict)
}

// Fires racing for one fire time, as two lease holders overlapping for a
// moment would, each with the time it read before its transaction: one
// creates its job, the others roll theirs back.
func testScheduleFireRace(t *testing.T, s engine.Store) {
	from := dbNow(t, s).Add(-time.Minute).Truncate(time.Second)
	sc := addSchedule(t, s, "race", from)
	const racers = 4
	var wg sync.WaitGroup
	errs := make([]error, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			errs[i] = s.Tx(t.Context(), func(tx engine.TxStore) error {
				job, err := tx.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Load: 1})
				if err != nil {
					return err
				}
				_, err = tx.ScheduleAdvance(t.Context(), engine.ScheduleAdvanceParams{
					Name: sc.Name, From: sc.NextFireAt, Next: from.Add(time.Hour), LastJobID: &job.ID})
				return err
			})
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, engine.ErrConflict):
			t.Errorf("a racing fire failed otherwise: %v", err)
		}
	}
	jobs := listAll(t, s)
	if won != 1 || len(jobs) != 1 {
		t.Fatalf("%d fires won and %d jobs exist, want 1 and 1", won, len(jobs))
	}
	got, _ := s.ScheduleGet(t.Context(), sc.Name)
	if got.LastJobID == nil || *got.LastJobID != jobs[0].ID {
		t.Errorf("last job = %v, want the one job %d", got.LastJobID, jobs[0].ID)
	}
}

func testScheduleTxRollback(t *testing.T, s engine.Store) {
	from := dbNow(t, s).Add(-time.Minute).Truncate(time.Second)
	addSchedule(t, s, "s", from)
	boom := errors.New("boom")
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		if _, err := tx.ScheduleAdvance(t.Context(), engine.ScheduleAdvanceParams{Name: "s", From: from, Next: from.Add(time.Hour)}); err != nil {
			return err
		}
		if err := tx.ScheduleDelete(t.Context(), "s"); err != nil {
			return err
		}
		if _, err := tx.ScheduleGet(t.Context(), "s"); !errors.Is(err, engine.ErrNotFound) {
			return errors.New("the transaction does not see its own delete")
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx = %v, want fn's error", err)
	}
	sc, err := s.ScheduleGet(t.Context(), "s")
	if err != nil || !sc.NextFireAt.Equal(from) {
		t.Errorf("after the rollback = %+v, %v; want it as it was", sc, err)
	}
}

package schedule

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/memstore"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// stores runs f on the in-memory store, on a fake clock, and on SQLite.
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

func now(t *testing.T, s engine.Store) time.Time {
	t.Helper()
	n, err := s.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// add stores a schedule of noop jobs last due at next (in the past: fires
// missed).
func add(t *testing.T, s engine.Store, name, cron string, overlap engine.ScheduleOverlap, next time.Time) {
	t.Helper()
	_, err := s.ScheduleAdd(t.Context(), engine.ScheduleAddParams{Name: name, Cron: cron, TZ: "UTC", Overlap: overlap,
		NextFireAt: next.Truncate(time.Second), Job: engine.JobTemplate{Type: engine.TypeNoop, Args: []string{"x"}, Load: engine.Ptr(0.5), Memory: engine.Ptr(int64(64 << 20))}})
	if err != nil {
		t.Fatal(err)
	}
}

// dueAgain makes a schedule due at once, as the clock reaching its next
// fire time would.
func dueAgain(t *testing.T, s engine.Store, name string) {
	t.Helper()
	_, err := s.ScheduleSetPaused(t.Context(), engine.ScheduleSetPausedParams{Name: name, NextFireAt: now(t, s).Add(-time.Second)})
	if err != nil {
		t.Fatal(err)
	}
}

func fire(t *testing.T, s engine.Store) FireStats {
	t.Helper()
	stats, err := NewFirer(s, quiet).Fire(t.Context(), nil)
	if err != nil {
		t.Fatalf("Fire: %v", err)
	}
	return stats
}

func jobs(t *testing.T, s engine.Store) []*engine.Job {
	t.Helper()
	js, err := s.JobList(t.Context(), engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func get(t *testing.T, s engine.Store, name string) *engine.Schedule {
	t.Helper()
	sc, err := s.ScheduleGet(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestMissedFiresMakeOneJob(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		start := now(t, s)
		add(t, s, "m", "@every 1m", engine.OverlapAllow, start.Add(-time.Hour)) // 60 fires missed
		if st := fire(t, s); st.Fired != 1 {
			t.Fatalf("fire = %+v, want one job", st)
		}
		js := jobs(t, s)
		if len(js) != 1 {
			t.Fatalf("%d jobs, want 1", len(js))
		}
		j := js[0]
		if j.Type != engine.TypeNoop || len(j.Args) != 1 || j.Load != 0.5 || j.Creator != "schedule:m" || j.Status != engine.StatusQueued || j.MemoryLimit != 64<<20 {
			t.Errorf("job = %+v, want the template's noop for creator schedule:m", j)
		}
		sc := get(t, s, "m")
		if sc.LastJobID == nil || *sc.LastJobID != j.ID || !sc.NextFireAt.After(j.CreatedAt) || sc.NextFireAt.After(j.CreatedAt.Add(time.Minute)) {
			t.Errorf("after the fire: next %s, last %v; want the first fire after %s and job %d", sc.NextFireAt, sc.LastJobID, j.CreatedAt, j.ID)
		}
		if st := fire(t, s); st.Fired != 0 || len(jobs(t, s)) != 1 {
			t.Errorf("firing again before the next time = %+v; want nothing", st)
		}
	})
}

func TestOverlapSkipWaitsForTheLastJob(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		add(t, s, "s", "@every 1m", engine.OverlapSkip, now(t, s).Add(-time.Second))
		fire(t, s)
		dueAgain(t, s, "s")
		if st := fire(t, s); st.Skipped != 1 || st.Fired != 0 || len(jobs(t, s)) != 1 {
			t.Fatalf("fire while the last job is queued = %+v with %d jobs; want it passed over", st, len(jobs(t, s)))
		}
		if sc := get(t, s, "s"); !sc.NextFireAt.After(now(t, s)) {
			t.Errorf("a passed-over fire left next %s, not in the future", sc.NextFireAt)
		}
		last := jobs(t, s)[0]
		u, err := engine.VerbCancel.Update(last)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.JobUpdate(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		dueAgain(t, s, "s")
		if st := fire(t, s); st.Fired != 1 || len(jobs(t, s)) != 2 {
			t.Errorf("fire once the last job ended = %+v; want a job", st)
		}
	})
}

func TestOverlapAllowAlwaysCreates(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		add(t, s, "a", "@every 1m", engine.OverlapAllow, now(t, s).Add(-time.Second))
		fire(t, s)
		dueAgain(t, s, "a")
		if st := fire(t, s); st.Fired != 1 || len(jobs(t, s)) != 2 {
			t.Errorf("second fire = %+v; want a job beside the unfinished one", st)
		}
	})
}

func TestPausedSchedulesDoNotFire(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		add(t, s, "p", "@every 1m", engine.OverlapAllow, now(t, s).Add(-time.Hour))
		if _, err := Pause(t.Context(), s, "p"); err != nil {
			t.Fatal(err)
		}
		if st := fire(t, s); st.Fired != 0 || len(jobs(t, s)) != 0 {
			t.Fatalf("fire of a paused schedule = %+v", st)
		}
		if wait, ok, err := NewFirer(s, quiet).Wait(t.Context()); ok || err != nil {
			t.Errorf("Wait with only a paused schedule = %s, %v, %v; want none", wait, ok, err)
		}
		sc, err := Resume(t.Context(), s, "p")
		if err != nil {
			t.Fatal(err)
		}
		// The fires that fell in the pause are not made up.
		if !sc.NextFireAt.After(now(t, s)) {
			t.Errorf("resumed with next %s; want the first fire after now", sc.NextFireAt)
		}
		if st := fire(t, s); st.Fired != 0 {
			t.Errorf("fire right after resume = %+v; want nothing", st)
		}
	})
}

func TestConcurrentFirersMakeOneJob(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		add(t, s, "r", "@every 1m", engine.OverlapAllow, now(t, s).Add(-time.Minute))
		var wg sync.WaitGroup
		stats := make([]FireStats, 3)
		for i := range stats {
			wg.Go(func() {
				var err error
				if stats[i], err = NewFirer(s, quiet).Fire(t.Context(), nil); err != nil {
					t.Errorf("Fire: %v", err)
				}
			})
		}
		wg.Wait()
		fired := 0
		for _, st := range stats {
			fired += st.Fired
		}
		if fired != 1 || len(jobs(t, s)) != 1 {
			t.Errorf("racing firers made %d fires and %d jobs (%+v); want one", fired, len(jobs(t, s)), stats)
		}
	})
}

func TestFireOnAFakeClock(t *testing.T) {
	clock := engine.NewVirtualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := memstore.New(clock)
	if _, err := Add(t.Context(), s, engine.ScheduleAddParams{Name: "h", Cron: "@hourly", TZ: "UTC",
		Overlap: engine.OverlapAllow, Job: engine.JobTemplate{Type: engine.TypeNoop}}); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2030, 1, 2, 4, 0, 0, 0, time.UTC); !get(t, s, "h").NextFireAt.Equal(want) {
		t.Fatalf("first fire %s, want %s", get(t, s, "h").NextFireAt, want)
	}
	f := NewFirer(s, quiet)
	if wait, ok, _ := f.Wait(t.Context()); !ok || wait != 55*time.Minute+55*time.Second {
		t.Errorf("Wait = %s, %v; want 55m55s", wait, ok)
	}
	fire(t, s)
	clock.Advance(56 * time.Minute)
	fire(t, s)
	clock.Advance(5 * time.Hour) // five fires missed: one job
	fire(t, s)
	if n := len(jobs(t, s)); n != 2 {
		t.Errorf("%d jobs, want 2", n)
	}
	if want := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC); !get(t, s, "h").NextFireAt.Equal(want) {
		t.Errorf("next fire %s, want %s", get(t, s, "h").NextFireAt, want)
	}
}

func TestFiredJobsCarryTheirRollback(t *testing.T) {
	stores(t, func(t *testing.T, s engine.Store) {
		_, err := s.ScheduleAdd(t.Context(), engine.ScheduleAddParams{Name: "migrate", Cron: "@hourly", TZ: "UTC",
			Overlap: engine.OverlapAllow, NextFireAt: now(t, s).Add(-time.Minute).Truncate(time.Second),
			Job: engine.JobTemplate{Type: engine.TypeExec, Args: []string{"./up"}, Key: "db",
				Rollback: "./down --to 'last good'", RollbackType: "undo"}})
		if err != nil {
			t.Fatal(err)
		}
		fire(t, s)
		js := jobs(t, s)
		if len(js) != 1 || js[0].Rollback != "./down --to 'last good'" || js[0].RollbackType != "undo" || js[0].Key != "db" {
			t.Fatalf("fired %+v, want one job with the template's rollback", js)
		}
	})
}

package storetest

import (
	"maps"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var windowTests = []subtest{
	{"JobListCreatedWindow", testJobListCreatedWindow},
	{"JobListCreatedWindowFilters", testJobListCreatedWindowFilters},
}

// windowJobs creates jobs of the given statuses one after another, each
// created strictly later than the one before by the store's clock.
func windowJobs(t *testing.T, s engine.Store, statuses ...engine.Status) []*engine.Job {
	t.Helper()
	var jobs []*engine.Job
	for i, st := range statuses {
		if i > 0 {
			waitDBClockPast(t, s, jobs[i-1].CreatedAt)
		}
		var j *engine.Job
		switch st {
		case engine.StatusQueued, engine.StatusInstantiated:
			j = insert(t, s, engine.JobInsertParams{Status: st})
		case engine.StatusFinished:
			j = finished(t, s, engine.JobInsertParams{}, engine.RunSucceeded)
		case engine.StatusFailed:
			j = finished(t, s, engine.JobInsertParams{}, engine.RunFailed)
		default:
			t.Fatalf("windowJobs cannot make a %s job", st)
		}
		if i > 0 && !j.CreatedAt.After(jobs[i-1].CreatedAt) {
			t.Fatalf("job %d created at %s, not after job %d at %s", j.ID, j.CreatedAt, jobs[i-1].ID, jobs[i-1].CreatedAt)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// wantWindow checks the listing of p and that JobCountByStatus counts
// the same jobs, status by status.
func wantWindow(t *testing.T, s engine.Store, what string, p engine.JobListParams, want ...*engine.Job) {
	t.Helper()
	wantIDs(t, what, list(t, s, p), want...)
	wantCounts := map[engine.Status]int{}
	for _, j := range want {
		wantCounts[j.Status]++
	}
	if got := countByStatus(t, s, p); !maps.Equal(got, wantCounts) {
		t.Errorf("%s: counts %v, want %v", what, got, wantCounts)
	}
}

// The creation window includes both of its ends, either end may stay
// open, and a bound finer than the stored times still splits them
// exactly where a comparison of the times themselves would.
func testJobListCreatedWindow(t *testing.T, s engine.Store) {
	js := windowJobs(t, s, engine.StatusQueued, engine.StatusFinished, engine.StatusQueued, engine.StatusFailed)
	j1, j2, j3, j4 := js[0], js[1], js[2], js[3]
	at := func(j *engine.Job, d time.Duration) *time.Time {
		v := j.CreatedAt.Add(d)
		return &v
	}
	for _, tt := range []struct {
		what          string
		after, before *time.Time
		want          []*engine.Job
	}{
		{"no window", nil, nil, js},
		{"since the second, inclusive", at(j2, 0), nil, []*engine.Job{j2, j3, j4}},
		{"since a nanosecond after the second", at(j2, time.Nanosecond), nil, []*engine.Job{j3, j4}},
		{"since a nanosecond before the second", at(j2, -time.Nanosecond), nil, []*engine.Job{j2, j3, j4}},
		{"since after the last", at(j4, time.Nanosecond), nil, nil},
		{"until the third, inclusive", nil, at(j3, 0), []*engine.Job{j1, j2, j3}},
		{"until a nanosecond before the third", nil, at(j3, -time.Nanosecond), []*engine.Job{j1, j2}},
		{"until a nanosecond after the third", nil, at(j3, time.Nanosecond), []*engine.Job{j1, j2, j3}},
		{"until before the first", nil, at(j1, -time.Nanosecond), nil},
		{"second to third", at(j2, 0), at(j3, 0), []*engine.Job{j2, j3}},
		{"one instant", at(j2, 0), at(j2, 0), []*engine.Job{j2}},
		{"between two jobs", at(j2, time.Nanosecond), at(j3, -time.Nanosecond), nil},
		{"since after until", at(j3, 0), at(j2, 0), nil},
		{"in another zone", func() *time.Time {
			v := j2.CreatedAt.In(time.FixedZone("east", 5*3600))
			return &v
		}(), nil, []*engine.Job{j2, j3, j4}},
	} {
		wantWindow(t, s, tt.what, engine.JobListParams{CreatedAfter: tt.after, CreatedBefore: tt.before}, tt.want...)
	}
	// The limit keeps the newest jobs of the window, not of the table.
	wantIDs(t, "first to third, limit 2",
		list(t, s, engine.JobListParams{CreatedAfter: at(j1, 0), CreatedBefore: at(j3, 0), Limit: 2}), j2, j3)
	wantIDs(t, "until the second, limit 1",
		list(t, s, engine.JobListParams{CreatedBefore: at(j2, 0), Limit: 1}), j2)
	// The count ignores the limit, as it does without a window.
	if got := countByStatus(t, s, engine.JobListParams{CreatedAfter: at(j2, 0), Limit: 1}); !maps.Equal(got,
		map[engine.Status]int{engine.StatusFinished: 1, engine.StatusQueued: 1, engine.StatusFailed: 1}) {
		t.Errorf("since the second, limit 1: counts %v, want one FINISHED, QUEUED and FAILED", got)
	}
}

// The window combines with the other filters, on live and ended statuses
// alike (a store may look the two up differently).
func testJobListCreatedWindowFilters(t *testing.T, s engine.Store) {
	js := windowJobs(t, s, engine.StatusQueued, engine.StatusFinished, engine.StatusQueued,
		engine.StatusInstantiated, engine.StatusFinished, engine.StatusQueued)
	after, before := js[1].CreatedAt, js[4].CreatedAt
	window := func(statuses ...engine.Status) engine.JobListParams {
		return engine.JobListParams{Statuses: statuses, CreatedAfter: &after, CreatedBefore: &before}
	}
	wantWindow(t, s, "QUEUED in the window", window(engine.StatusQueued), js[2])
	wantWindow(t, s, "QUEUED or INSTANTIATED in the window",
		window(engine.StatusQueued, engine.StatusInstantiated), js[2], js[3])
	wantWindow(t, s, "FINISHED in the window", window(engine.StatusFinished), js[1], js[4])
	wantWindow(t, s, "FINISHED or QUEUED in the window",
		window(engine.StatusFinished, engine.StatusQueued), js[1], js[2], js[4])
	wantWindow(t, s, "FAILED in the window", window(engine.StatusFailed))
	p := window()
	p.Types = []string{engine.TypeNoop}
	wantWindow(t, s, "noop in the window", p, js[1], js[2], js[3], js[4])
	p.Types = []string{engine.TypeSleep}
	wantWindow(t, s, "sleep in the window", p)
}

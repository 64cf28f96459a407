package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var sortTests = []subtest{
	{"JobListSorted", testJobListSorted},
	{"JobListSortedBeforeLimit", testJobListSortedBeforeLimit},
	{"JobListSortUnknown", testJobListSortUnknown},
}

// sortJobs makes five jobs that order differently by every field: types
// whose byte order differs from a locale's (B, _x, a, b), equal loads,
// jobs never started or finished, and starts and ends in another order
// than the ids. It returns them as the store lists them now.
func sortJobs(t *testing.T, s engine.Store) []*engine.Job {
	t.Helper()
	later := dbNow(t, s).Add(time.Hour)
	j1 := insert(t, s, engine.JobInsertParams{Type: "b", Load: 1, Key: "k2"})
	j2 := insert(t, s, engine.JobInsertParams{Type: "B", Load: 3, Operation: "z"})
	j3 := insert(t, s, engine.JobInsertParams{Type: "_x", Load: 3, Key: "k1", RunAfter: &later})
	j4 := insert(t, s, engine.JobInsertParams{Type: "a", Load: 0.5, Operation: "op", Status: engine.StatusInstantiated})
	j5 := insert(t, s, engine.JobInsertParams{Type: "b", Load: 2})

	j5 = start(t, s, j5, "n1")
	waitDBClockPast(t, s, *j5.StartedAt)
	j2 = start(t, s, j2, "n2")
	waitDBClockPast(t, s, *j2.StartedAt)
	j3 = start(t, s, j3, "n1")
	if err := s.JobProgressSet(t.Context(), engine.JobProgressParams{ID: j3.ID, Attempt: j3.Attempt, Node: "n1", Progress: 40}); err != nil {
		t.Fatal(err)
	}
	j2 = finish(t, s, j2, engine.RunSucceeded)
	waitDBClockPast(t, s, *j2.FinishedAt)
	finish(t, s, j5, engine.RunFailed)
	all := list(t, s, engine.JobListParams{})
	if !slices.Equal(ids(all), ids([]*engine.Job{j1, j2, j3, j4, j5})) {
		t.Fatalf("listed %v, want the five jobs made", ids(all))
	}
	return all
}

// Every field of engine.JobSortFields, both ways, lists exactly the order
// engine.JobSort.Compare defines, the whole jobs and their brief forms,
// for any status and for live ones only (the store's two paths).
func testJobListSorted(t *testing.T, s engine.Store) {
	all := sortJobs(t, s)
	byID := map[int64]*engine.Job{}
	for _, j := range all {
		byID[j.ID] = j
	}
	live := []engine.Status{engine.StatusQueued, engine.StatusInstantiated, engine.StatusRunning}
	for _, f := range engine.JobSortFields {
		for _, desc := range []bool{false, true} {
			sort := engine.JobSort{Field: f.Name, Desc: desc}
			for _, statuses := range [][]engine.Status{nil, live} {
				want := slices.Clone(all)
				if statuses != nil {
					want = slices.DeleteFunc(want, func(j *engine.Job) bool { return !slices.Contains(statuses, j.Status) })
				}
				slices.SortFunc(want, sort.Compare)
				p := engine.JobListParams{Sort: sort, Statuses: statuses}
				got := list(t, s, p)
				wantIDs(t, describeSort(p), got, want...)
				for _, j := range got {
					if !reflect.DeepEqual(j, byID[j.ID]) {
						t.Errorf("%s: job %d differs from the unsorted listing's:\n %+v\n %+v", describeSort(p), j.ID, j, byID[j.ID])
					}
				}
				p.Brief = true
				wantIDs(t, describeSort(p)+", brief", list(t, s, p), want...)
				p.Brief, p.Limit = false, 2
				wantIDs(t, describeSort(p), list(t, s, p), want[:min(2, len(want))]...)
			}
		}
	}

	// The definition itself, spelled out for a few fields.
	j1, j2, j3, j4, j5 := all[0], all[1], all[2], all[3], all[4]
	for _, tc := range []struct {
		sort engine.JobSort
		want []*engine.Job
	}{
		// Byte order, not a locale's: upper case, then '_', then lower.
		{engine.JobSort{Field: "type"}, []*engine.Job{j2, j3, j4, j1, j5}},
		// Equal loads go by id, in the sort's direction.
		{engine.JobSort{Field: "load", Desc: true}, []*engine.Job{j3, j2, j5, j1, j4}},
		// Never started comes first ascending, last descending.
		{engine.JobSort{Field: "started"}, []*engine.Job{j1, j4, j5, j2, j3}},
		{engine.JobSort{Field: "finished", Desc: true}, []*engine.Job{j5, j2, j4, j3, j1}},
		{engine.JobSort{Field: "status"}, []*engine.Job{j5, j2, j4, j1, j3}},
		{engine.JobSort{Field: "progress", Desc: true}, []*engine.Job{j3, j5, j4, j2, j1}},
		{engine.JobSort{Field: "id", Desc: true}, []*engine.Job{j5, j4, j3, j2, j1}},
	} {
		p := engine.JobListParams{Sort: tc.sort}
		wantIDs(t, describeSort(p), list(t, s, p), tc.want...)
	}
}

func describeSort(p engine.JobListParams) string {
	dir := "ascending"
	if p.Sort.Desc {
		dir = "descending"
	}
	d := "sorted by " + p.Sort.Field + " " + dir
	if p.Statuses != nil {
		d += ", live statuses"
	}
	if p.Limit > 0 {
		d += ", limit 2"
	}
	return d
}

// A sort applies to every matching job before the limit: the heaviest
// jobs are found however old they are, where the unsorted limit keeps
// the newest.
func testJobListSortedBeforeLimit(t *testing.T, s engine.Store) {
	var jobs []*engine.Job
	for _, load := range []float64{9, 8, 1, 1, 1, 1, 1} {
		jobs = append(jobs, queued(t, s, load))
	}
	wantIDs(t, "newest 3", list(t, s, engine.JobListParams{Limit: 3}), jobs[4], jobs[5], jobs[6])
	wantIDs(t, "3 heaviest", list(t, s, engine.JobListParams{Limit: 3, Sort: engine.JobSort{Field: "load", Desc: true}}),
		jobs[0], jobs[1], jobs[6])
	wantIDs(t, "3 heaviest queued", list(t, s, engine.JobListParams{Limit: 3, Statuses: []engine.Status{engine.StatusQueued},
		Sort: engine.JobSort{Field: "load", Desc: true}}), jobs[0], jobs[1], jobs[6])
	wantIDs(t, "2 lightest", list(t, s, engine.JobListParams{Limit: 2, Sort: engine.JobSort{Field: "load"}}), jobs[2], jobs[3])
}

// A field the store does not know is an *InvalidError, whatever it
// holds, and lists nothing.
func testJobListSortUnknown(t *testing.T, s engine.Store) {
	queued(t, s, 1)
	for _, field := range []string{"nope", "job_load", "id; DELETE FROM jobs", "LOAD"} {
		jobs, err := s.JobList(t.Context(), engine.JobListParams{Sort: engine.JobSort{Field: field}})
		wantErrIs(t, "sort by "+field, err, engine.ErrInvalid)
		if len(jobs) != 0 {
			t.Errorf("sort by %q: %d jobs listed with the error", field, len(jobs))
		}
	}
	if n := len(list(t, s, engine.JobListParams{})); n != 1 {
		t.Errorf("%d jobs after the refused sorts, want 1", n)
	}
}

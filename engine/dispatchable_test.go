package engine

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDispatchHold(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(90*time.Second), now.Add(-time.Second)
	job := func(id int64, st Status, key string) *Job { return &Job{ID: id, Status: st, Key: key} }
	onNode := func(j *Job) *Job { j.Node = "n1"; return j }
	pending := func(j *Job) *Job { j.Rollback = "undo"; return j }
	rolledBack := func(j *Job) *Job { j.Rollback, j.RollbackJobID = "undo", Ptr(int64(10)); return j }
	placed := func(j *Job, place int64) *Job { j.KeyPosition = Ptr(place); return j }
	for _, tc := range []struct {
		name    string
		job     *Job
		others  []*Job
		want    HoldKind
		blocker int64
		reason  string
	}{
		{"queued", job(1, StatusQueued, ""), nil, HoldNone, 0, "dispatchable now"},
		{"restart", job(1, StatusRestart, ""), nil, HoldNone, 0, "dispatchable now"},
		{"held", job(1, StatusInstantiated, ""), nil, HoldStatus, 0, "held"},
		{"paused", job(1, StatusPaused, ""), nil, HoldStatus, 0, "paused"},
		{"running", job(1, StatusRunning, ""), nil, HoldStatus, 0, "already handed to a node"},
		{"ended", job(1, StatusFailed, ""), nil, HoldStatus, 0, "ended FAILED"},
		{"waiting", job(1, StatusWaiting, ""), nil, HoldStatus, 0, "waiting for its children: 0 of 0 ended"},
		{"starts later", &Job{ID: 1, Status: StatusQueued, RunAfter: &later}, nil, HoldRunAfter, 0, "starts in 1m30s"},
		{"start passed", &Job{ID: 1, Status: StatusQueued, RunAfter: &earlier}, nil, HoldNone, 0, ""},
		{"earlier unfinished of key", job(5, StatusQueued, "k"), []*Job{job(3, StatusQueued, "k")}, HoldKey, 3, `waiting behind job 3 of key "k"`},
		{"earlier ended of key", job(5, StatusQueued, "k"), []*Job{job(3, StatusFinished, "k")}, HoldNone, 0, ""},
		{"later active of key", job(5, StatusRestart, "k"), []*Job{job(9, StatusRunning, "k")}, HoldKey, 9, "RUNNING"},
		{"later queued of key", job(5, StatusQueued, "k"), []*Job{job(9, StatusQueued, "k")}, HoldNone, 0, ""},
		{"later paused before it ran", job(5, StatusQueued, "k"), []*Job{job(9, StatusPaused, "k")}, HoldNone, 0, ""},
		{"later paused on a node", job(5, StatusQueued, "k"), []*Job{onNode(job(9, StatusPaused, "k"))}, HoldKey, 9, ""},
		{"later waiting for children", job(5, StatusQueued, "k"), []*Job{job(9, StatusWaiting, "k")}, HoldKey, 9, ""},
		{"other key", job(5, StatusQueued, "k"), []*Job{job(3, StatusRunning, "other")}, HoldNone, 0, ""},
		{"no key ignores others", job(5, StatusQueued, ""), []*Job{job(3, StatusRunning, "")}, HoldNone, 0, ""},
		{"active named before earlier", job(5, StatusQueued, "k"), []*Job{job(2, StatusQueued, "k"), job(4, StatusRunning, "k")}, HoldKey, 4, ""},
		{"itself", job(5, StatusQueued, "k"), []*Job{job(5, StatusQueued, "k")}, HoldNone, 0, ""},
		{"earlier failed awaiting its rollback", job(5, StatusQueued, "k"), []*Job{pending(job(3, StatusFailed, "k"))}, HoldKey, 3,
			`waiting for the rollback of job 3 of key "k"`},
		{"earlier failed, rollback made", job(5, StatusQueued, "k"), []*Job{rolledBack(job(3, StatusFailed, "k"))}, HoldNone, 0, ""},
		{"earlier failed without rollback", job(5, StatusQueued, "k"), []*Job{job(3, StatusFailed, "k")}, HoldNone, 0, ""},
		{"earlier cancelled with rollback", job(5, StatusQueued, "k"), []*Job{pending(job(3, StatusCancelled, "k"))}, HoldNone, 0, ""},
		{"later failed awaiting its rollback", job(5, StatusQueued, "k"), []*Job{pending(job(9, StatusFailed, "k"))}, HoldNone, 0, ""},
		{"rollback job after the job it undoes", placed(job(9, StatusQueued, "k"), 3), []*Job{job(3, StatusQueued, "k")}, HoldKey, 3,
			`waiting behind job 3 of key "k"`},
		{"rollback job before later jobs", job(5, StatusQueued, "k"), []*Job{placed(job(9, StatusQueued, "k"), 3)}, HoldKey, 9, ""},
		{"earliest place named", job(5, StatusQueued, "k"), []*Job{job(4, StatusQueued, "k"), placed(job(9, StatusQueued, "k"), 3)}, HoldKey, 9, ""},
		{"same place, lower id first", placed(job(9, StatusQueued, "k"), 3), []*Job{placed(job(8, StatusQueued, "k"), 3)}, HoldKey, 8, ""},
		{"same place, higher id after", placed(job(8, StatusQueued, "k"), 3), []*Job{placed(job(9, StatusQueued, "k"), 3)}, HoldNone, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := DispatchHold(tc.job, now, tc.others)
			if h.Kind != tc.want || h.BlockedBy != tc.blocker {
				t.Fatalf("DispatchHold = %+v, want kind %q blocked by %d", h, tc.want, tc.blocker)
			}
			if h.Dispatchable() != (tc.want == HoldNone) {
				t.Errorf("Dispatchable() = %v", h.Dispatchable())
			}
			if r := h.Reason(now); !strings.Contains(r, tc.reason) {
				t.Errorf("Reason = %q, want it to contain %q", r, tc.reason)
			}
		})
	}
}

func TestRollbackArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		want []string
		err  string
	}{
		{`undo --to "last good" 'a b' c\ d`, []string{"undo", "--to", "last good", "a b", "c d"}, ""},
		{`echo $HOME`, []string{"echo", "$HOME"}, ""},
		{`echo "$(id)"`, []string{"echo", "$(id)"}, ""},
		{`undo 'unbalanced`, nil, "unbalanced quotes"},
		{`undo; rm -rf /`, nil, "unquoted shell operator"},
		{`undo | tee`, nil, "unquoted shell operator"},
		{`undo ';'`, []string{"undo", ";"}, ""},
		{"   ", nil, "no words"},
	} {
		got, err := RollbackArgs(tc.spec)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("RollbackArgs(%q) = %q, %v; want an error with %q", tc.spec, got, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("RollbackArgs(%q) = %q, %v; want %q", tc.spec, got, err, tc.want)
		}
	}
}

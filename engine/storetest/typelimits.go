package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var typeLimitTests = []subtest{
	{"TypeLimits", testTypeLimits},
	{"TypeLimitRunning", testTypeLimitRunning},
	{"TypeLimitRefused", testTypeLimitRefused},
}

func setTypeLimit(t *testing.T, s engine.Store, typ string, max int) {
	t.Helper()
	if err := s.TypeLimitSet(t.Context(), engine.TypeLimitSetParams{Type: typ, MaxRunning: max}); err != nil {
		t.Fatalf("TypeLimitSet(%s, %d): %v", typ, max, err)
	}
}

func typeLimits(t *testing.T, s engine.Store) []engine.TypeLimit {
	t.Helper()
	got, err := s.TypeLimitList(t.Context())
	if err != nil {
		t.Fatalf("TypeLimitList: %v", err)
	}
	if got == nil {
		t.Error("TypeLimitList returned nil, want an empty list")
	}
	return got
}

// typeLimitCounts is each limit as "type max running", for comparisons
// that leave the time out.
func typeLimitCounts(limits []engine.TypeLimit) []string {
	out := []string{}
	for _, l := range limits {
		out = append(out, fmt.Sprintf("%s %d %d", l.Type, l.MaxRunning, l.Running))
	}
	return out
}

func wantTypeLimits(t *testing.T, s engine.Store, what string, want ...string) []engine.TypeLimit {
	t.Helper()
	got := typeLimits(t, s)
	if want == nil {
		want = []string{}
	}
	if counts := typeLimitCounts(got); !reflect.DeepEqual(counts, want) {
		t.Errorf("%s: limits %q, want %q", what, counts, want)
	}
	return got
}

func testTypeLimits(t *testing.T, s engine.Store) {
	wantTypeLimits(t, s, "none yet")

	before := dbNow(t, s)
	setTypeLimit(t, s, "render", 2)
	setTypeLimit(t, s, "encode", 5)
	// Characters, not bytes, like a job's type.
	long := strings.Repeat("ü", engine.MaxNameLength)
	setTypeLimit(t, s, long, engine.MaxTypeLimit)
	after := dbNow(t, s)
	got := wantTypeLimits(t, s, "set, listed by type", "encode 5 0", "render 2 0", long+" 1000000000 0")
	for _, l := range got {
		wantUTC(t, "updated_at of "+l.Type, l.UpdatedAt)
		if !within(l.UpdatedAt, before.Truncate(time.Second), after) {
			t.Errorf("updated_at of %s = %s, want it within [%s, %s] on the database clock", l.Type, l.UpdatedAt, before, after)
		}
	}

	// Setting again replaces the limit, and its time.
	waitDBClockPast(t, s, got[1].UpdatedAt)
	setTypeLimit(t, s, "render", 3)
	again := wantTypeLimits(t, s, "replaced", "encode 5 0", "render 3 0", long+" 1000000000 0")
	if len(again) == 3 && !again[1].UpdatedAt.After(got[1].UpdatedAt) {
		t.Errorf("updated_at after replacing = %s, want it after %s", again[1].UpdatedAt, got[1].UpdatedAt)
	}

	if err := s.TypeLimitDelete(t.Context(), "render"); err != nil {
		t.Fatalf("TypeLimitDelete(render): %v", err)
	}
	wantTypeLimits(t, s, "after removing render", "encode 5 0", long+" 1000000000 0")
	err := s.TypeLimitDelete(t.Context(), "render")
	wantErrIs(t, "removing a limit twice", err, engine.ErrNotFound)
	if err != nil && !strings.Contains(err.Error(), "render") {
		t.Errorf("removing a limit twice: error %q does not name the type", err)
	}
	wantErrIs(t, "removing a limit never set", s.TypeLimitDelete(t.Context(), "Encode"), engine.ErrNotFound)
	wantTypeLimits(t, s, "after the refusals", "encode 5 0", long+" 1000000000 0")
}

// testTypeLimitRunning: a limit counts the jobs of its type that hold load
// on a node, as a node's load counts them, and nothing else.
func testTypeLimitRunning(t *testing.T, s engine.Store) {
	job := func(typ string) *engine.Job { return insert(t, s, engine.JobInsertParams{Type: typ, Load: 1}) }
	// Counted: running, paused while running, cancelling.
	start(t, s, job("lim"), "n1")
	start(t, s, job("lim"), "n1")
	start(t, s, job("lim"), "n2")
	admin(t, s, start(t, s, job("lim"), "n2"), engine.VerbPause)
	admin(t, s, start(t, s, job("lim"), "n1"), engine.VerbCancel)
	// Not counted: queued, held, paused before it ran, waiting for its
	// children, ended.
	job("lim")
	insert(t, s, engine.JobInsertParams{Type: "lim", Status: engine.StatusInstantiated})
	admin(t, s, job("lim"), engine.VerbPause)
	waitChildren(t, s, start(t, s, job("lim"), "n1"))
	finish(t, s, start(t, s, job("lim"), "n1"), engine.RunSucceeded)
	// Other types: one limited, one not, whose running jobs are not listed.
	start(t, s, job("other"), "n1")
	start(t, s, job("free"), "n1")
	start(t, s, job("Lim"), "n1")

	setTypeLimit(t, s, "lim", 2)
	setTypeLimit(t, s, "other", 1)
	setTypeLimit(t, s, "idle", 1)
	wantTypeLimits(t, s, "counted", "idle 1 0", "lim 2 5", "other 1 1")

	// The count follows the jobs.
	running := getRunning(t, s, "lim")
	finish(t, s, running, engine.RunSucceeded)
	wantTypeLimits(t, s, "after one ended", "idle 1 0", "lim 2 4", "other 1 1")
}

// getRunning returns one RUNNING job of typ.
func getRunning(t *testing.T, s engine.Store, typ string) *engine.Job {
	t.Helper()
	jobs, err := s.JobList(t.Context(), engine.JobListParams{Types: []string{typ}, Statuses: []engine.Status{engine.StatusRunning}, Limit: 1})
	if err != nil || len(jobs) == 0 {
		t.Fatalf("JobList(running %s) = %v, %v", typ, jobs, err)
	}
	return jobs[0]
}

func testTypeLimitRefused(t *testing.T, s engine.Store) {
	for _, p := range []engine.TypeLimitSetParams{
		{Type: "", MaxRunning: 1},
		{Type: "  ", MaxRunning: 1},
		{Type: "a\nb", MaxRunning: 1},
		{Type: strings.Repeat("x", engine.MaxNameLength+1), MaxRunning: 1},
		{Type: "\xff", MaxRunning: 1},
		{Type: "t", MaxRunning: 0},
		{Type: "t", MaxRunning: -1},
		{Type: "t", MaxRunning: engine.MaxTypeLimit + 1},
	} {
		err := s.TypeLimitSet(t.Context(), p)
		wantErrIs(t, fmt.Sprintf("TypeLimitSet(%q, %d)", p.Type, p.MaxRunning), err, engine.ErrInvalid)
	}
	wantTypeLimits(t, s, "after the refusals")
}

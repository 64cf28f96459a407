package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// auditEnv is a test environment whose operator is alice@host1.
func auditEnv(t *testing.T) *testEnv {
	t.Helper()
	e := newTestEnv(t)
	e.f.Who = func() string { return "alice@host1" }
	return e
}

// eventsJSON runs `events -o json` with args and returns what it printed.
func (e *testEnv) eventsJSON(t *testing.T, args ...string) []engine.Event {
	t.Helper()
	if err := e.run(t, append([]string{"events", "-o", "json"}, args...)...); err != nil {
		t.Fatal(err)
	}
	var events []engine.Event
	if err := json.Unmarshal(e.stdout.Bytes(), &events); err != nil {
		t.Fatalf("events -o json printed %q: %v", e.stdout.String(), err)
	}
	return events
}

func TestCancelWithReasonNamesWhoAndWhy(t *testing.T) {
	e := auditEnv(t)
	running := e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode"}), engine.StatusRunning)
	child := e.insert(t, engine.JobInsertParams{ParentID: &running.ID})
	if err := e.run(t, "cancel", fmt.Sprint(running.ID), "--reason", "input was the wrong file"); err != nil {
		t.Fatal(err)
	}

	events := e.eventsJSON(t, "--job", fmt.Sprint(running.ID))
	if len(events) != 1 {
		t.Fatalf("events of the job: %+v; want the cancel", events)
	}
	ev := events[0]
	if ev.Who != "alice@host1" || ev.Verb != "cancel" || ev.Reason != "input was the wrong file" ||
		ev.Detail != "RUNNING → CANCELLING" || ev.Type != "encode" || ev.JobID == nil || *ev.JobID != running.ID {
		t.Errorf("the cancel's event: %+v", ev)
	}
	if ev := e.eventsJSON(t, "--job", fmt.Sprint(child.ID)); len(ev) != 1 ||
		ev[0].Detail != fmt.Sprintf("QUEUED → CANCELLED; with job %d", running.ID) || ev[0].Reason != "input was the wrong file" {
		t.Errorf("the child's events: %+v; want its cancel with the parent's", ev)
	}

	// show names who and why, on a terminal, piped and in JSON; once the
	// node has stopped it too.
	e.move(t, e.get(t, running.ID), engine.StatusCancelled)
	if err := e.run(t, "show", fmt.Sprint(running.ID)); err != nil {
		t.Fatal(err)
	}
	if want := "message\tcancelled by alice@host1: input was the wrong file\n"; !strings.Contains(e.stdout.String(), want) {
		t.Errorf("show printed:\n%s\nwant the line %q", e.stdout.String(), want)
	}
	if err := e.run(t, "show", fmt.Sprint(running.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var shown struct {
		EndedBy *engine.Event `json:"ended_by"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.EndedBy == nil || shown.EndedBy.Who != "alice@host1" || shown.EndedBy.Reason != "input was the wrong file" {
		t.Errorf("show -o json ended_by: %+v", shown.EndedBy)
	}

	// A job that ended on its own has no ended_by.
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	if err := e.run(t, "show", fmt.Sprint(done.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.stdout.String(), `"ended_by": null`) {
		t.Errorf("show -o json of a finished job: want ended_by null:\n%s", e.stdout.String())
	}
}

func TestReasonRefusedChangesNothing(t *testing.T) {
	e := auditEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	for _, reason := range []string{"two\nlines", strings.Repeat("x", engine.MaxEventReason+1), "\xff"} {
		err := e.run(t, "cancel", fmt.Sprint(j.ID), "--reason", reason)
		if !errors.As(err, new(*UsageError)) {
			t.Errorf("--reason %q: %v; want a usage error", reason, err)
		}
	}
	if got := e.get(t, j.ID); got.Status != engine.StatusQueued {
		t.Errorf("job after refused cancels: %s; want QUEUED", got.Status)
	}
	if ev := e.eventsJSON(t); len(ev) != 0 {
		t.Errorf("events after refused cancels: %+v; want none", ev)
	}
}

// Every command that changes the cluster records its event, naming the
// operator, the reason and what it changed.
func TestEveryChangeIsRecorded(t *testing.T) {
	e := auditEnv(t)
	ctx := context.Background()
	e.registerNode(t, "n1")
	gone := e.registerNode(t, "gone")
	if err := e.store.NodeSetState(ctx, gone.Name, engine.NodeOffline); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.LeaseAcquire(ctx, "n1", time.Minute); err != nil {
		t.Fatal(err)
	}
	wfPath := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(wfPath, []byte(testWorkflow), 0o600); err != nil {
		t.Fatal(err)
	}
	batchPath := filepath.Join(t.TempDir(), "batch.jsonl")
	if err := os.WriteFile(batchPath, []byte("{\"type\":\"noop\"}\n{\"type\":\"sleep\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	held := e.insert(t, engine.JobInsertParams{Status: engine.StatusInstantiated, Type: "sleep"})
	old := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)

	for _, c := range []struct {
		args []string
		want []string // verb and what of each event, oldest first
	}{
		{[]string{"submit", "--type", "noop"}, []string{"submit job 3 (noop) QUEUED"}},
		{[]string{"submit", "--batch", batchPath}, []string{"submit job 4 (noop) one of a batch of 2", "submit job 5 (sleep) one of a batch of 2"}},
		{[]string{"release", fmt.Sprint(held.ID)}, []string{"release job 1 (sleep) INSTANTIATED → QUEUED"}},
		{[]string{"pause", "3"}, []string{"pause job 3 (noop) QUEUED → PAUSED"}},
		{[]string{"resume", "3"}, []string{"resume job 3 (noop) PAUSED → QUEUED"}},
		{[]string{"requeue", fmt.Sprint(old.ID)}, []string{"requeue job 2 (noop) FINISHED → RESTART"}},
		{[]string{"cancel", "4"}, []string{"cancel job 4 (noop) QUEUED → CANCELLED"}},
		{[]string{"delete", "4"}, []string{"delete job 4 (noop) CANCELLED → DELETED"}},
		{[]string{"nodes", "maintenance", "n1", "on"}, []string{"nodes maintenance node n1 maintenance on"}},
		{[]string{"nodes", "maintenance", "n1", "on"}, nil}, // nothing to change
		{[]string{"nodes", "maintenance", "n1", "off"}, []string{"nodes maintenance node n1 maintenance off"}},
		{[]string{"nodes", "drain", "n1"}, []string{"nodes drain node n1 maintenance on"}},
		{[]string{"nodes", "rm", "gone"}, []string{"nodes rm node gone OFFLINE"}},
		{[]string{"limits", "set", "encode", "--max-running", "2"}, []string{"limits set type encode max running 2"}},
		{[]string{"limits", "set", "encode", "--max-running", "3"}, []string{"limits set type encode max running 3 (was 2)"}},
		{[]string{"limits", "rm", "encode"}, []string{"limits rm type encode"}},
		{[]string{"schedules", "add", "nightly", "--cron", "@daily", "--type", "noop"}, []string{"schedules add schedule nightly @daily (UTC)"}},
		{[]string{"schedules", "pause", "nightly"}, []string{"schedules pause schedule nightly"}},
		{[]string{"schedules", "pause", "nightly"}, nil},
		{[]string{"schedules", "resume", "nightly"}, []string{"schedules resume schedule nightly"}},
		{[]string{"schedules", "rm", "nightly"}, []string{"schedules rm schedule nightly"}},
		{[]string{"workflow", "start", wfPath}, []string{"workflow start job 6 (workflow) nightly: 2 operations"}},
		{[]string{"workflow", "cancel", "6"}, []string{"workflow cancel job 6 (workflow) QUEUED → CANCELLED; with workflow 6"}},
		{[]string{"lease", "release"}, []string{"lease release node n1 term 1"}},
		{[]string{"lease", "release"}, nil},
	} {
		before := len(e.eventsJSON(t, "--limit", "0"))
		args := append(c.args, "--reason", "because "+c.args[0])
		if err := e.run(t, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		events := e.eventsJSON(t, "--limit", "0")[before:]
		var got []string
		for _, ev := range events {
			got = append(got, strings.TrimSpace(ev.Verb+" "+eventSubject(ev)+" "+ev.Detail))
			if ev.Who != "alice@host1" || ev.Reason != "because "+c.args[0] {
				t.Errorf("%v: event %+v; want alice@host1 and the reason", args, ev)
			}
		}
		match := len(got) == len(c.want)
		for i := range got {
			match = match && strings.HasPrefix(got[i], c.want[i])
		}
		if !match {
			t.Errorf("%v recorded:\n%s\nwant lines starting:\n%s", args, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

func TestPruneRecordsAndRemovesEvents(t *testing.T) {
	e := auditEnv(t)
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
	if err := e.run(t, "delete", fmt.Sprint(done.ID)); err != nil {
		t.Fatal(err)
	}
	e.registerNode(t, "n1")
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}
	// Every job and event so far is older than the cutoff.
	waitStoreClock(t, e.store, time.Now().Add(20*time.Millisecond))
	if err := e.run(t, "prune", "--older-than", "10ms", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var res pruneResult
	if err := json.Unmarshal(e.stdout.Bytes(), &res); err != nil || res.Removed != 1 || res.EventsRemoved != 1 {
		t.Fatalf("prune -o json: %s, %v; want 1 job and 1 event removed", e.stdout.String(), err)
	}
	events := e.eventsJSON(t)
	if len(events) != 1 || events[0].Verb != "prune" || events[0].Who != "alice@host1" ||
		!strings.HasPrefix(events[0].Detail, "1 job and 1 event before ") {
		t.Errorf("events after the prune: %+v; want only the prune's own", events)
	}
}

// waitStoreClock waits until the database clock is past t.
func waitStoreClock(t *testing.T, s engine.Store, t0 time.Time) {
	t.Helper()
	var now time.Time
	if !waitfor.Within(30*time.Second, func() bool {
		var err error
		if now, err = s.Now(context.Background()); err != nil {
			t.Fatal(err)
		}
		return now.After(t0)
	}) {
		t.Fatalf("database clock %s never passed %s", now, t0)
	}
}

func TestEventsListing(t *testing.T) {
	e := auditEnv(t)
	a := e.insert(t, engine.JobInsertParams{Type: "encode"})
	b := e.insert(t, engine.JobInsertParams{})
	if err := e.run(t, "cancel", fmt.Sprint(a.ID), fmt.Sprint(b.ID), "--reason", "not needed"); err != nil {
		t.Fatal(err)
	}
	e.registerNode(t, "n1")
	if err := e.run(t, "nodes", "maintenance", "n1", "on"); err != nil {
		t.Fatal(err)
	}

	// Piped: tab-separated, no header, times in UTC.
	if err := e.run(t, "events"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("events printed %q; want 3 lines", e.stdout.String())
	}
	cells := strings.Split(lines[0], "\t")
	if len(cells) != 6 || cells[1] != "alice@host1" || cells[2] != "cancel" || cells[3] != fmt.Sprintf("job %d (encode)", a.ID) ||
		cells[4] != "QUEUED → CANCELLED" || cells[5] != "not needed" {
		t.Errorf("first line %q", lines[0])
	}
	if _, err := time.Parse(time.RFC3339, cells[0]); err != nil || !strings.HasSuffix(cells[0], "Z") {
		t.Errorf("piped time %q: want RFC 3339 in UTC", cells[0])
	}
	if want := "alice@host1\tnodes maintenance\tnode n1\tmaintenance on\t"; !strings.HasSuffix(lines[2], want) {
		t.Errorf("last line %q; want it to end %q", lines[2], want)
	}

	// Filters.
	if ev := e.eventsJSON(t, "--job", fmt.Sprint(b.ID)); len(ev) != 1 || *ev[0].JobID != b.ID {
		t.Errorf("--job: %+v", ev)
	}
	if ev := e.eventsJSON(t, "--node", "n1"); len(ev) != 1 || ev[0].Verb != "nodes maintenance" {
		t.Errorf("--node: %+v", ev)
	}
	if ev := e.eventsJSON(t, "--node", "n2"); len(ev) != 0 {
		t.Errorf("--node of a node without events: %+v", ev)
	}
	if ev := e.eventsJSON(t, "--limit", "2"); len(ev) != 2 || *ev[0].JobID != b.ID {
		t.Errorf("--limit 2: %+v; want the newest two", ev)
	} else if !strings.Contains(e.stderr.String(), "showing the newest 2 matching events; --limit 0 shows all") {
		t.Errorf("--limit 2 said on stderr %q", e.stderr.String())
	}
	e.f.Clock = fixedClock(time.Now().Add(30 * time.Minute))
	if ev := e.eventsJSON(t, "--since", "1h"); len(ev) != 3 {
		t.Errorf("--since 1h: %d events; want 3", len(ev))
	}
	if ev := e.eventsJSON(t, "--since", "10m"); len(ev) != 0 {
		t.Errorf("--since 10m, 30 minutes after they were recorded: %+v; want none", ev)
	}

	// On a terminal: a header and ages.
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	e.f.Clock = fixedClock(time.Now().Add(90 * time.Second))
	if err := e.run(t, "events", "-o", "wide"); err != nil {
		t.Fatal(err)
	}
	out := e.stdout.String()
	for _, want := range []string{"ID", "AGE", "WHO", "VERB", "WHAT", "DETAIL", "REASON", "1m30s", "not needed", "nodes maintenance"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal table lacks %q:\n%s", want, out)
		}
	}

	// Bad flags are usage errors.
	for _, args := range [][]string{{"--job", "0"}, {"--since", "yesterday-ish"}, {"--limit", "-1"}, {"extra"}, {"-q"}} {
		if err := e.run(t, append([]string{"events"}, args...)...); !errors.As(err, new(*UsageError)) {
			t.Errorf("events %v: %v; want a usage error", args, err)
		}
	}
}

func TestEventsFollow(t *testing.T) {
	e := auditEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := e.insert(t, engine.JobInsertParams{})
	if _, err := engine.ApplyVerb(ctx, e.store, j.ID, engine.VerbPause, engine.Actor{Who: "bob@host2"}); err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	ios := *e.f.IO
	ios.Out = out
	opts := &EventsOptions{IO: &ios, Store: e.f.Store, Clock: e.f.Clock, Follow: true, Interval: 10 * time.Millisecond,
		Output: outputOptions{Format: formatJSON}}
	done := make(chan error, 1)
	go func() { done <- eventsRun(ctx, opts) }()

	waitFor := func(what string, n int) []engine.Event {
		t.Helper()
		var events []engine.Event
		if !waitfor.Within(30*time.Second, func() bool {
			events = nil
			dec := json.NewDecoder(strings.NewReader(out.String()))
			for {
				var ev engine.Event
				if dec.Decode(&ev) != nil {
					break
				}
				events = append(events, ev)
			}
			return len(events) >= n
		}) {
			t.Fatalf("waiting for %s: printed %q", what, out.String())
		}
		return events
	}
	waitFor("the event there before", 1)
	if _, err := engine.ApplyVerb(ctx, e.store, j.ID, engine.VerbResume, engine.Actor{Who: "carol@host3", Reason: "go on"}); err != nil {
		t.Fatal(err)
	}
	events := waitFor("the new event", 2)
	if events[0].Who != "bob@host2" || events[1].Who != "carol@host3" || events[1].Reason != "go on" {
		t.Errorf("followed events %+v", events)
	}
	// Later polls read the same window again, and print nothing twice.
	time.Sleep(100 * time.Millisecond)
	if got := waitFor("nothing more", 2); len(got) != 2 {
		t.Errorf("followed %d events, want 2: %q", len(got), out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("events -f ended with %v; want nil once interrupted", err)
	}
}

// The events table follows --headers and --no-headers as every table does.
func TestEventsHeaders(t *testing.T) {
	e := auditEnv(t)
	j := e.insert(t, engine.JobInsertParams{})
	if err := e.run(t, "cancel", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags  []string
		header bool
	}{{nil, false}, {[]string{"--headers"}, true}, {[]string{"--no-headers"}, false}} {
		if err := e.run(t, append([]string{"events"}, tc.flags...)...); err != nil {
			t.Fatal(err)
		}
		got := e.stdout.String()
		if has := strings.HasPrefix(got, "AGE\tWHO\tVERB"); has != tc.header || !strings.Contains(got, "\tcancel\t") {
			t.Errorf("piped %v: %q; want a header %v and the cancel", tc.flags, got, tc.header)
		}
	}
}

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func jobEvents(t *testing.T, s engine.Store, id int64) []engine.Event {
	t.Helper()
	events, err := s.EventList(context.Background(), engine.EventListParams{JobID: &id})
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// eventLine is an event as the tests compare it: who, verb, detail, reason.
func eventLine(e engine.Event) string {
	return fmt.Sprintf("%s|%s|%s|%s", e.Who, e.Verb, e.Detail, e.Reason)
}

func wantEventLines(t *testing.T, what string, events []engine.Event, want ...string) {
	t.Helper()
	var got []string
	for _, e := range events {
		got = append(got, eventLine(e))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func TestApplyVerbRecordsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	j := insertJob(t, s, nil)
	alice := engine.Actor{Who: "alice@host1", Reason: "wrong input"}
	bob := engine.Actor{Who: "bob@host2"}
	if _, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbPause, alice); err != nil {
		t.Fatal(err)
	}
	// Pausing it again changes nothing, so it records nothing.
	if _, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbPause, bob); err != nil {
		t.Fatal(err)
	}
	// A refused verb changes nothing and records nothing.
	if _, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbRelease, bob); !errors.Is(err, engine.ErrInvalidTransition) {
		t.Fatalf("release of a paused job: %v; want a refusal", err)
	}
	if _, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbCancel, bob); err != nil {
		t.Fatal(err)
	}
	events := jobEvents(t, s, j.ID)
	wantEventLines(t, "the job's events", events,
		"alice@host1|pause|QUEUED → PAUSED|wrong input",
		"bob@host2|cancel|PAUSED → CANCELLED|")
	got, err := s.JobGet(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	e := engine.EndedBy(got, events)
	if e == nil || engine.EndedText(e) != "cancelled by bob@host2" {
		t.Errorf("EndedBy = %+v; want bob's cancel, \"cancelled by bob@host2\"", e)
	}
}

// A reason the store would refuse is refused before the job changes: no
// change is kept without its event.
func TestApplyVerbBadReasonChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	j := insertJob(t, s, nil)
	for _, by := range []engine.Actor{{Who: "a@b", Reason: "two\nlines"}, {Who: ""}} {
		_, err := engine.ApplyVerb(ctx, s, j.ID, engine.VerbCancel, by)
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("cancel by %+v: %v; want an invalid event", by, err)
		}
	}
	if got, _ := s.JobGet(ctx, j.ID); got.Status != engine.StatusQueued || len(jobEvents(t, s, j.ID)) != 0 {
		t.Errorf("after refused cancels: %s with %d events; want QUEUED with none", got.Status, len(jobEvents(t, s, j.ID)))
	}
}

func TestCancelRecordsEachDescendant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	parent := moveJob(t, s, insertJob(t, s, nil), engine.StatusRunning)
	child := insertJob(t, s, &parent.ID)
	grandchild := insertJob(t, s, &child.ID)
	by := engine.Actor{Who: "alice@host1", Reason: "disk full"}
	if _, err := engine.ApplyVerb(ctx, s, parent.ID, engine.VerbCancel, by); err != nil {
		t.Fatal(err)
	}
	wantEventLines(t, "the parent's", jobEvents(t, s, parent.ID), "alice@host1|cancel|RUNNING → CANCELLING|disk full")
	wantEventLines(t, "the child's", jobEvents(t, s, child.ID),
		fmt.Sprintf("alice@host1|cancel|QUEUED → CANCELLED; with job %d|disk full", parent.ID))
	wantEventLines(t, "the grandchild's", jobEvents(t, s, grandchild.ID),
		fmt.Sprintf("alice@host1|cancel|QUEUED → CANCELLED; with job %d|disk full", parent.ID))

	g, err := s.JobGet(ctx, grandchild.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("cancelled by alice@host1 (with job %d): disk full", parent.ID)
	if e := engine.EndedBy(g, jobEvents(t, s, grandchild.ID)); e == nil || engine.EndedText(e) != want {
		t.Errorf("who ended the grandchild: %+v; want %q", e, want)
	}
	// The parent is CANCELLING until its node stops it, then CANCELLED:
	// either way it was alice.
	p := moveJob(t, s, mustGet(t, s, parent.ID), engine.StatusCancelled)
	if e := engine.EndedBy(p, jobEvents(t, s, parent.ID)); e == nil || engine.EndedText(e) != "cancelled by alice@host1: disk full" {
		t.Errorf("who ended the parent once its node stopped it: %+v", e)
	}
}

func mustGet(t *testing.T, s engine.Store, id int64) *engine.Job {
	t.Helper()
	j, err := s.JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestEndedBy(t *testing.T) {
	t.Parallel()
	id := int64(7)
	ev := func(verb, detail string) engine.Event {
		return engine.Event{Who: "alice@h", Verb: verb, JobID: &id, Detail: detail, Reason: "why"}
	}
	for _, c := range []struct {
		name   string
		status engine.Status
		events []engine.Event
		want   string
	}{
		{"no events", engine.StatusCancelled, nil, ""},
		{"cancelled by the node's timeout after a pause", engine.StatusCancelled,
			[]engine.Event{ev("pause", "RUNNING → PAUSED"), ev("resume", "PAUSED → RUNNING")}, ""},
		{"cancelled", engine.StatusCancelled, []engine.Event{ev("cancel", "QUEUED → CANCELLED")}, "cancelled by alice@h: why"},
		{"being cancelled", engine.StatusCancelling, []engine.Event{ev("cancel", "RUNNING → CANCELLING")}, "cancelled by alice@h: why"},
		{"requeued and finished since", engine.StatusFinished,
			[]engine.Event{ev("cancel", "QUEUED → CANCELLED"), ev("requeue", "CANCELLED → RESTART")}, ""},
		{"stopped at a drain's deadline", engine.StatusCancelled,
			[]engine.Event{ev("nodes drain", "RUNNING → CANCELLING; drain deadline of node n1")},
			"cancelled by alice@h (drain deadline of node n1): why"},
		{"requeued by a drain, then timed out", engine.StatusCancelled,
			[]engine.Event{ev("nodes drain", "RUNNING → CANCELLING"), ev("nodes drain", "CANCELLED → RESTART")}, ""},
		{"deleted", engine.StatusDeleted,
			[]engine.Event{ev("cancel", "QUEUED → CANCELLED"), ev("delete", "CANCELLED → DELETED")}, "deleted by alice@h: why"},
		{"workflow", engine.StatusCancelled, []engine.Event{ev("workflow cancel", "QUEUED → CANCELLED; with workflow 3")},
			"cancelled by alice@h (with workflow 3): why"},
	} {
		e := engine.EndedBy(&engine.Job{ID: id, Status: c.status}, c.events)
		got := ""
		if e != nil {
			got = engine.EndedText(e)
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestRecordedKeepsNeitherWithoutTheOther(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, _ func(time.Time)) {
		ctx := t.Context()
		by := engine.Actor{Who: "alice@host1", Reason: "tidy up"}
		boom := errors.New("boom")
		err := engine.Recorded(ctx, s, by, engine.EventAppendParams{Verb: engine.EventLimitsSet, Type: "encode"},
			func(tx engine.TxStore, _ *engine.EventAppendParams) error {
				if err := tx.TypeLimitSet(ctx, engine.TypeLimitSetParams{Type: "encode", MaxRunning: 2}); err != nil {
					return err
				}
				return boom
			})
		if !errors.Is(err, boom) {
			t.Fatalf("Recorded = %v, want the change's error", err)
		}
		// An event the store refuses undoes the change.
		err = engine.Recorded(ctx, s, by, engine.EventAppendParams{Verb: engine.EventLimitsSet, Detail: "bad\ttab"},
			func(tx engine.TxStore, _ *engine.EventAppendParams) error {
				return tx.TypeLimitSet(ctx, engine.TypeLimitSetParams{Type: "encode", MaxRunning: 2})
			})
		if !errors.Is(err, engine.ErrInvalid) {
			t.Fatalf("Recorded with a refused event = %v, want ErrInvalid", err)
		}
		limits, _ := s.TypeLimitList(ctx)
		events, _ := s.EventList(ctx, engine.EventListParams{})
		if len(limits) != 0 || len(events) != 0 {
			t.Fatalf("after two failed changes: %v limits, %v events; want none", limits, events)
		}
		err = engine.Recorded(ctx, s, by, engine.EventAppendParams{Verb: engine.EventLimitsSet, Type: "encode"},
			func(tx engine.TxStore, e *engine.EventAppendParams) error {
				e.Detail = "max running 2"
				return tx.TypeLimitSet(ctx, engine.TypeLimitSetParams{Type: "encode", MaxRunning: 2})
			})
		if err != nil {
			t.Fatal(err)
		}
		events, _ = s.EventList(ctx, engine.EventListParams{})
		if len(events) != 1 || eventLine(events[0]) != "alice@host1|limits set|max running 2|tidy up" || events[0].Type != "encode" {
			t.Errorf("events after the change: %+v", events)
		}
	})
}

func TestSubmitsRecordEvents(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, _ func(time.Time)) {
		ctx := t.Context()
		by := engine.Actor{Who: "alice@host1"}
		one, err := engine.SubmitRecorded(ctx, s, nil, engine.SubmitRequest{Type: "encode", Hold: true}, by)
		if err != nil {
			t.Fatal(err)
		}
		child, err := engine.SubmitRecorded(ctx, s, nil, engine.SubmitRequest{Type: "noop", ParentID: &one.Job.ID},
			engine.Actor{Who: fmt.Sprintf("job %d@n1", one.Job.ID)})
		if err != nil {
			t.Fatal(err)
		}
		many, err := engine.SubmitMany(ctx, s, nil, []engine.SubmitRequest{{Type: "noop"}, {Type: "encode"}}, by)
		if err != nil {
			t.Fatal(err)
		}
		wantEventLines(t, "the held job's", jobEvents(t, s, one.Job.ID), "alice@host1|submit|INSTANTIATED|")
		wantEventLines(t, "the child's", jobEvents(t, s, child.Job.ID),
			fmt.Sprintf("job %d@n1|submit|QUEUED, child of %d|", one.Job.ID, one.Job.ID))
		for _, id := range many.IDs {
			wantEventLines(t, "a batch job's", jobEvents(t, s, id), "alice@host1|submit|one of a batch of 2|")
		}
		if e := jobEvents(t, s, many.IDs[1]); len(e) == 1 && e[0].Type != "encode" {
			t.Errorf("a batch job's event has type %q, want its job's, encode", e[0].Type)
		}
		// A refused submit records nothing.
		if _, err := engine.SubmitRecorded(ctx, s, nil, engine.SubmitRequest{Type: ""}, by); !errors.Is(err, engine.ErrInvalid) {
			t.Fatalf("a submit without a type: %v", err)
		}
		if events, _ := s.EventList(ctx, engine.EventListParams{}); len(events) != 4 {
			t.Errorf("%d events, want the 4 of the jobs created", len(events))
		}
	})
}

// A prune of every ended status takes the events naming no job recorded
// before its cutoff; a job's events go with the job.
func TestPruneRemovesEvents(t *testing.T) {
	t.Parallel()
	storeKinds(t, func(t *testing.T, s engine.Store, past func(time.Time)) {
		ctx := t.Context()
		by := engine.Actor{Who: "alice@host1"}
		record := func(e engine.EventAppendParams) {
			t.Helper()
			if err := engine.Recorded(ctx, s, by, e, func(engine.TxStore, *engine.EventAppendParams) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		old := pruneRun(t, s, engine.RunSucceeded, nil)
		record(engine.EventAppendParams{Verb: engine.EventSubmit, JobIDs: []int64{old.ID}})
		record(engine.EventAppendParams{Verb: engine.EventNodesMaintenance, Node: "n1", Detail: "on"})
		oldEvents, _ := s.EventList(ctx, engine.EventListParams{})
		lastOld := oldEvents[len(oldEvents)-1].At
		past(lastOld)
		young := pruneRun(t, s, engine.RunSucceeded, nil)
		record(engine.EventAppendParams{Verb: engine.EventSubmit, JobIDs: []int64{young.ID}})
		record(engine.EventAppendParams{Verb: engine.EventNodesMaintenance, Node: "n1", Detail: "off"})
		ps := clockAfter(s, young)
		// The cutoff is halfway between the last old event and the young
		// job's end, not the old job's: on a busy machine the old events
		// may be recorded well after the old job ended.
		age := ps.now.Sub(lastOld.Add(young.FinishedAt.Sub(lastOld) / 2))

		// With states named, only jobs go.
		res, err := engine.Prune(ctx, ps, engine.PruneParams{OlderThan: age, Statuses: []engine.Status{engine.StatusFailed}})
		if err != nil || res.Removed != 0 || res.EventsRemoved != 0 {
			t.Fatalf("prune of failed jobs: %+v, %v; want nothing removed", res, err)
		}
		dry, err := engine.Prune(ctx, ps, engine.PruneParams{OlderThan: age, DryRun: true})
		if err != nil || dry.Removed != 1 || dry.EventsRemoved != 1 {
			t.Fatalf("dry run: %+v, %v; want 1 job and 1 event counted", dry, err)
		}
		res, err = engine.Prune(ctx, ps, engine.PruneParams{OlderThan: age})
		if err != nil || res.Removed != 1 || res.EventsRemoved != 1 {
			t.Fatalf("prune: %+v, %v; want 1 job and 1 event removed", res, err)
		}
		events, _ := s.EventList(ctx, engine.EventListParams{})
		wantEventLines(t, "events after the prune", events, "alice@host1|submit||", "alice@host1|nodes maintenance|off|")
		if len(events) == 2 && (events[0].JobID == nil || *events[0].JobID != young.ID) {
			t.Errorf("the submit left is of job %v, want the young job %d", events[0].JobID, young.ID)
		}
	})
}

package engine

import (
	"reflect"
	"strings"
	"testing"
)

// Every constructor guards the job as it was read and takes it somewhere the
// state machine allows.
func TestHandshakeTransitions(t *testing.T) {
	t.Parallel()
	queued := &Job{ID: 7, Status: StatusQueued, Version: 3}
	restart := &Job{ID: 7, Status: StatusRestart, Version: 4, Attempt: 2}
	running := &Job{ID: 7, Status: StatusRunning, Version: 5, Node: "n1", Attempt: 3}
	for _, tc := range []struct {
		name string
		u    JobUpdate
		to   Status
		node *string
	}{
		{"start from the queue", QueuedStartUpdate(queued, "n1"), StatusRunning, Ptr("n1")},
		{"start a retry", QueuedStartUpdate(restart, "n2"), StatusRunning, Ptr("n2")},
		{"start offer from the queue", StartOfferUpdate(OfferOf(queued, LeaseTerm{}), "n1"), StatusRunning, Ptr("n1")},
		{"refuse from the queue", RefuseUpdate(queued, "n1", "type not offered"), StatusFailed, nil},
		{"refuse started", RefuseUpdate(running, "n1", "bad payload"), StatusFailed, nil},
	} {
		if err := tc.u.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.u.To != tc.to || tc.u.ID != 7 {
			t.Errorf("%s: update %+v, want to %s", tc.name, tc.u, tc.to)
		}
		if (tc.node == nil) != (tc.u.Node == nil) || (tc.node != nil && *tc.node != *tc.u.Node) {
			t.Errorf("%s: node %v, want %v", tc.name, tc.u.Node, tc.node)
		}
	}
	if u := QueuedStartUpdate(restart, "n1"); !u.IncrementAttempt || !u.MarkStarted || u.Version != 4 || u.From != StatusRestart {
		t.Errorf("start = %+v: want a new attempt, started_at, guarded by RESTART at version 4", u)
	}
	if u, o := QueuedStartUpdate(queued, "n1"), StartOfferUpdate(OfferOf(queued, LeaseTerm{}), "n1"); !reflect.DeepEqual(u, o) {
		t.Errorf("start of an offer from the queue = %+v, want the claiming start of the job offered, %+v", o, u)
	}
	// A batch's starts are each offer's StartOfferUpdate, under the term of
	// its own offer, however the terms follow one another.
	starts := NewOfferStarts("n1")
	var batch []JobUpdate
	for i, term := range []LeaseTerm{{Owner: "d1", Term: 4}, {Owner: "d1", Term: 4}, {}, {Owner: "d2", Term: 4}, {Owner: "d1", Term: 4}} {
		o := OfferOf(&Job{ID: int64(10 + i), Status: StatusQueued, Version: 2}, term)
		u := starts.Update(o)
		if want := StartOfferUpdate(o, "n1"); !reflect.DeepEqual(u, want) {
			t.Errorf("start %d of a batch = %+v under %+v, want %+v under %+v", i, u, u.StartedUnder, want, want.StartedUnder)
		}
		batch = append(batch, u)
	}
	if batch[0].Node != batch[4].Node || batch[0].StartedUnder != batch[1].StartedUnder {
		t.Error("a batch's starts do not share their node, or two in a row under one term do not share it")
	}
	if u := RefuseUpdate(queued, "n1", "bad payload"); !u.MarkFinished || *u.Message != "refused by node n1: bad payload" {
		t.Errorf("refuse = %+v", u)
	}
}

// An offer from a dispatcher of an older release names a job it marked
// DISPATCHING, or no status at all; the state is retired, so such an
// offer is malformed.
func TestOffersOfTheRetiredStateAreInvalid(t *testing.T) {
	t.Parallel()
	for _, st := range []Status{"", "DISPATCHING", StatusRunning, StatusInstantiated} {
		if ValidOfferStatus(st) {
			t.Errorf("an offer of a job in %q is valid", st)
		}
	}
	for _, st := range DispatchableStatuses {
		if !ValidOfferStatus(st) {
			t.Errorf("an offer of a job in %s is invalid", st)
		}
	}
	if _, err := ParseStatus("dispatching"); err == nil || !strings.Contains(err.Error(), "retired") {
		t.Errorf("ParseStatus(dispatching) = %v; want an error saying the state is retired", err)
	}
}

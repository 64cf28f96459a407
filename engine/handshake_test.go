package engine

import (
	"reflect"
	"testing"
)

// Every constructor guards the job as it was read and takes it somewhere the
// state machine allows.
func TestHandshakeTransitions(t *testing.T) {
	t.Parallel()
	queued := &Job{ID: 7, Status: StatusQueued, Version: 3}
	dispatching := &Job{ID: 7, Status: StatusDispatching, Version: 4, Node: "n1", Attempt: 2}
	running := &Job{ID: 7, Status: StatusRunning, Version: 5, Node: "n1", Attempt: 3}
	for _, tc := range []struct {
		name string
		u    JobUpdate
		to   Status
		node *string
	}{
		{"dispatch", DispatchUpdate(queued, "n1"), StatusDispatching, Ptr("n1")},
		{"retarget", DispatchUpdate(dispatching, "n2"), StatusDispatching, Ptr("n2")},
		{"put back", PutBackUpdate(dispatching, StatusQueued), StatusQueued, Ptr("")},
		{"reclaim", ReclaimUpdate(dispatching), StatusRestart, Ptr("")},
		{"refuse", RefuseUpdate(dispatching, "n1", "type not offered"), StatusFailed, nil},
		{"start", StartUpdate(dispatching), StatusRunning, nil},
		{"start offer", StartOfferUpdate(DispatchOffer{JobID: 7, Attempt: 2, Version: 4}, "n1"), StatusRunning, nil},
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
	if u := StartUpdate(dispatching); !u.IncrementAttempt || !u.MarkStarted || u.Version != 4 || u.From != StatusDispatching {
		t.Errorf("start = %+v: want a new attempt, started_at, guarded by version 4", u)
	}
	if u, o := StartUpdate(dispatching), StartOfferUpdate(DispatchOffer{JobID: 7, Attempt: 2, Version: 4}, "n1"); !reflect.DeepEqual(u, o) {
		t.Errorf("start of an offer = %+v, want the start of the job offered, %+v", o, u)
	}
	if u, o := QueuedStartUpdate(queued, "n1"), StartOfferUpdate(OfferOf(queued, LeaseTerm{}), "n1"); !reflect.DeepEqual(u, o) {
		t.Errorf("start of an offer from the queue = %+v, want the claiming start of the job offered, %+v", o, u)
	}
	if u := DispatchUpdate(queued, "n1"); u.IncrementAttempt {
		t.Error("dispatch counts an attempt: only the node starting the job does")
	}
	if u := RefuseUpdate(dispatching, "n1", "bad payload"); !u.MarkFinished || *u.Message != "refused by node n1: bad payload" {
		t.Errorf("refuse = %+v", u)
	}
	if u := ReclaimUpdate(dispatching); *u.Message != "dispatch to n1 was interrupted" {
		t.Errorf("reclaim message = %q", *u.Message)
	}
}

package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var rulesNow = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// heldRow is a row of a node with a 10 s node lease last seen ago before
// rulesNow, held by pid 100 on host boot-1.
func heldRow(state engine.NodeState, ago time.Duration) *engine.Node {
	return &engine.Node{Name: "a", State: state, LastSeen: rulesNow.Add(-ago), Lease: engine.Duration(10 * time.Second),
		Process: engine.NodeProcess{Host: "boot-1", PID: 100, StartTime: 5}}
}

func TestNodeFree(t *testing.T) {
	t.Parallel()
	sameHost := engine.NodeProcess{Host: "boot-1", PID: 200, StartTime: 9}
	otherHost := engine.NodeProcess{Host: "boot-2", PID: 200, StartTime: 9}
	gone := func(engine.NodeProcess) bool { return true }
	alive := func(engine.NodeProcess) bool { return false }
	silent := heldRow(engine.NodeOnline, 0).GoneAfter() + time.Millisecond
	for _, c := range []struct {
		what             string
		held             *engine.Node
		p                engine.NodeProcess
		gone             func(engine.NodeProcess) bool
		free, byIdentity bool
	}{
		{"a holder silent past its GoneAfter, from another host", heldRow(engine.NodeOnline, silent), otherHost, nil, true, false},
		{"a holder seen just now, from another host", heldRow(engine.NodeOnline, 0), otherHost, gone, false, false},
		{"a holder seen just now whose process is gone, same host", heldRow(engine.NodeOnline, 0), sameHost, gone, true, true},
		{"a holder seen just now whose process lives, same host", heldRow(engine.NodeOnline, 0), sameHost, alive, false, false},
		{"a holder seen just now, same host, no way to tell", heldRow(engine.NodeOnline, 0), sameHost, nil, false, false},
		{"an OFFLINE holder seen just now is not free", heldRow(engine.NodeOffline, 0), otherHost, nil, false, false},
	} {
		free, byIdentity := engine.NodeFree(c.held, c.p, rulesNow, c.gone)
		if free != c.free || byIdentity != c.byIdentity {
			t.Errorf("%s: free %v by identity %v; want %v, %v", c.what, free, byIdentity, c.free, c.byIdentity)
		}
	}
}

func TestNodeGone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		what string
		n    *engine.Node
		want bool
	}{
		{"OFFLINE, seen just now", heldRow(engine.NodeOffline, 0), true},
		{"ONLINE, seen just now", heldRow(engine.NodeOnline, 0), false},
		{"ONLINE, silent for less than staleAfter", heldRow(engine.NodeOnline, time.Minute-time.Millisecond), false},
		{"ONLINE, silent for staleAfter", heldRow(engine.NodeOnline, time.Minute), true},
		{"ERROR, silent for longer", heldRow(engine.NodeError, time.Hour), true},
	} {
		if got := engine.NodeGone(c.n, rulesNow, time.Minute); got != c.want {
			t.Errorf("%s: gone %v; want %v", c.what, got, c.want)
		}
	}
}

// racedRegistrar is a store whose row of the name is taken by another
// process between RegisterNode's read and its claim.
type racedRegistrar struct {
	row    *engine.Node
	winner engine.NodeProcess
	claims []engine.NodeClaimParams
}

func (r *racedRegistrar) Now(context.Context) (time.Time, error) { return rulesNow, nil }

func (r *racedRegistrar) NodeGet(context.Context, string) (*engine.Node, error) {
	n := *r.row
	return &n, nil
}

func (r *racedRegistrar) NodeClaim(_ context.Context, p engine.NodeClaimParams) (*engine.Node, error) {
	r.claims = append(r.claims, p)
	if p.Former != nil {
		// The other restart won: the row names it now, seen just now.
		r.row.Process, r.row.LastSeen = r.winner, rulesNow
	}
	return nil, engine.ErrConflict
}

// Of two restarts racing for a name whose holder is gone, the one whose
// guarded claim finds the row taken is refused, naming the winner.
func TestRegisterNodeLosesARace(t *testing.T) {
	t.Parallel()
	winner := engine.NodeProcess{Host: "boot-1", PID: 300, StartTime: 11}
	r := &racedRegistrar{row: heldRow(engine.NodeOnline, 0), winner: winner}
	late := engine.Node{Name: "a", URL: "http://a", Process: engine.NodeProcess{Host: "boot-1", PID: 200, StartTime: 9}}
	former := r.row.Process
	_, err := engine.RegisterNode(t.Context(), r, engine.NodeRegisterParams{Node: late,
		ProcessGone: func(p engine.NodeProcess) bool { return p == former }})
	if !errors.Is(err, engine.ErrNodeOnline) {
		t.Fatalf("the loser of a race: %v; want ErrNodeOnline", err)
	}
	if len(r.claims) != 2 || r.claims[0].Former != nil || r.claims[1].Former == nil ||
		r.claims[1].Former.Process != former || r.claims[1].Former.SilentFor != 0 {
		t.Errorf("claims %+v; want an insert, then a replacement guarded on pid 100 alone", r.claims)
	}
}

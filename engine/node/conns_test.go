package node

import (
	"database/sql"
	"math"
	"testing"
	"time"
)

// poolRecorder is a pool whose figures a test sets, recording what a node
// asks of it.
type poolRecorder struct {
	stats sql.DBStats
	n     int
	d     time.Duration
	// idle is how many connections sit unused: those beyond a lower n
	// close when it is set, as database/sql closes them.
	idle int
	// control is the control connection's idle time.
	control time.Duration
}

func (p *poolRecorder) SetControlIdleTime(d time.Duration) { p.control = d }

func (p *poolRecorder) SetIdleConns(n int, d time.Duration) {
	if p.idle > n {
		p.stats.MaxIdleClosed += int64(p.idle - n)
		p.idle = n
	}
	p.n, p.d = n, d
}
func (p *poolRecorder) ConnStats() sql.DBStats { return p.stats }

// TestConnKeeper: a node that does not hold the lease keeps one pool
// connection left unused, a little longer than the time between its
// liveness writes, so that connection is still open for the next one; one
// more after a liveness write that finds the pool closing connections all
// along, one fewer again once it closes none and has none in use; the
// lease holder keeps every one at least five seconds. Either way the
// control connection closes after half a node lease unused.
func TestConnKeeper(t *testing.T) {
	for _, tc := range []struct {
		lease time.Duration
		d     time.Duration // kept while not the holder
		held  time.Duration // kept by the holder
	}{
		{10 * time.Second, 2500 * time.Millisecond, 5 * time.Second},
		{time.Minute, 15 * time.Second, 15 * time.Second},
	} {
		p := &poolRecorder{stats: sql.DBStats{MaxOpenConnections: 4}}
		k := newConnKeeper(p, tc.lease)
		k.hold(false)
		if p.n != 1 || p.d != tc.d {
			t.Errorf("node lease %v: keeps %d for %v, want 1 for %v", tc.lease, p.n, p.d, tc.d)
		}
		if p.control != tc.lease/2 {
			t.Errorf("node lease %v: the control connection closes after %v unused, want %v", tc.lease, p.control, tc.lease/2)
		}
		if touches := tc.lease / 5; p.d <= touches {
			t.Errorf("node lease %v: an idle connection closes after %v, before the next liveness write (%v)", tc.lease, p.d, touches)
		}
		k.hold(true)
		if p.n != math.MaxInt || p.d != tc.held {
			t.Errorf("node lease %v, holding the lease: keeps %d for %v, want all for %v", tc.lease, p.n, p.d, tc.held)
		}
	}

	p := &poolRecorder{stats: sql.DBStats{MaxOpenConnections: 3}}
	k := newConnKeeper(p, 10*time.Second)
	k.hold(false)
	steps := []struct {
		closed int64 // closed beyond those kept since the last look
		inUse  int
		want   int
	}{
		{churnPerLook - 1, 1, 1}, // a burst's overlaps: they pass
		{churnPerLook, 2, 2},     // closing all along: keep one more
		{churnPerLook, 2, 3},
		{churnPerLook, 3, 3}, // no more than the pool holds
		{0, 2, 3},            // none closed, but at work
		{0, 0, 2},            // none closed, none in use: one fewer
		{0, 0, 1},
		{0, 0, 1}, // never fewer than one
	}
	for i, st := range steps {
		p.stats.MaxIdleClosed += st.closed
		p.stats.InUse = st.inUse
		k.look()
		if p.n != st.want {
			t.Errorf("look %d (%d closed, %d in use): keeps %d, want %d", i+1, st.closed, st.inUse, p.n, st.want)
		}
	}
	k.hold(true)
	p.stats.MaxIdleClosed += 100
	k.look()
	if p.n != math.MaxInt {
		t.Errorf("the lease holder's pool was sized by a look: keeps %d", p.n)
	}
	k.hold(false)
	if p.n != 1 {
		t.Errorf("after the lease: keeps %d, want 1", p.n)
	}

	// Giving the lease up closes the holder's idle connections beyond the
	// one kept: that is no churn.
	big := &poolRecorder{stats: sql.DBStats{MaxOpenConnections: 10, InUse: 1}, idle: 8}
	k = newConnKeeper(big, 10*time.Second)
	k.hold(true)
	k.hold(false)
	k.look()
	if big.n != 1 {
		t.Errorf("a look after the lease was given up, with %d idle connections closed then: keeps %d, want 1",
			big.stats.MaxIdleClosed, big.n)
	}
}

package engine

import (
	"testing"
	"time"
)

func TestStatusOf(t *testing.T) {
	now := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	missed := ago(12 * time.Second)
	hot := func(n *Node) { n.LoadAvg, n.MaxLoadAvg = 9.1, 4 }
	short := func(n *Node) { n.MemAvailable, n.ReservedMemory = 100<<20, 1<<30 }
	for _, c := range []struct {
		name   string
		node   Node
		change func(*Node)
		now    time.Time
		label  string
		note   string
	}{
		{"online", Node{State: NodeOnline, LastSeen: ago(time.Second)}, nil, now, "ONLINE", ""},
		{"in maintenance", Node{State: NodeMaintenance, Maintenance: true, LastSeen: ago(time.Second)}, nil, now, "ONLINE,MAINTENANCE", ""},
		{"overloaded by its load average", Node{State: NodeOnline, LastSeen: ago(time.Second)}, hot, now, "ONLINE,OVERLOADED",
			"overloaded: load average 9.1 above 4; it gets work only when no node under its limit can take it"},
		{"short of memory", Node{State: NodeOnline, LastSeen: ago(time.Second)}, short, now, "ONLINE,OVERLOADED",
			"overloaded: free memory 100MiB under reserve 1GiB; it takes no new work"},
		{"missed a heartbeat", Node{State: NodeOnline, LastSeen: ago(time.Second), BeatMissedAt: &missed}, nil, now, "WATCH",
			"missed a heartbeat 12s ago; a second miss marks it OFFLINE"},
		{"missed a heartbeat in maintenance, overloaded", Node{State: NodeMaintenance, Maintenance: true, LastSeen: ago(time.Second), BeatMissedAt: &missed}, hot, now,
			"WATCH,MAINTENANCE,OVERLOADED",
			"missed a heartbeat 12s ago; a second miss marks it OFFLINE; overloaded: load average 9.1 above 4; it gets work only when no node under its limit can take it"},
		{"late with its liveness", Node{State: NodeOnline, LastSeen: ago(6 * time.Second)}, nil, now, "WATCH",
			"late recording that it is alive: last 6s ago, node lease 10s"},
		{"at half its lease", Node{State: NodeOnline, LastSeen: ago(5 * time.Second)}, nil, now, "ONLINE", ""},
		{"past its lease with jobs", Node{State: NodeOnline, LastSeen: ago(11 * time.Second), Running: 3}, hot, now, "LOST",
			"silent for 11s, past its node lease 10s: it has stopped its runs; its 3 jobs are being put back in the queue"},
		{"past its lease, one job", Node{State: NodeOnline, LastSeen: ago(90 * time.Second), Running: 1, Lease: Duration(30 * time.Second)}, nil, now, "LOST",
			"silent for 1m30s, past its node lease 30s: it has stopped its runs; its 1 job is being put back in the queue"},
		{"lost in maintenance", Node{State: NodeMaintenance, Maintenance: true, LastSeen: ago(time.Minute), BeatMissedAt: &missed}, short, now, "LOST,MAINTENANCE",
			"silent for 1m0s, past its node lease 10s: it has stopped its runs"},
		{"stopped cleanly", Node{State: NodeOffline, LastSeen: ago(time.Hour)}, hot, now, "OFFLINE", ""},
		{"marked offline, its jobs not back yet", Node{State: NodeOffline, LastSeen: ago(30 * time.Second), Running: 2}, nil, now, "OFFLINE",
			"silent for 30s, past its node lease 10s: it has stopped its runs; its 2 jobs are being put back in the queue"},
		{"offline in maintenance", Node{State: NodeOffline, Maintenance: true, LastSeen: ago(time.Hour)}, nil, now, "OFFLINE,MAINTENANCE", ""},
		{"error", Node{State: NodeError, LastSeen: ago(time.Hour), Running: 1}, hot, now, "ERROR", ""},
		{"no clock", Node{State: NodeOnline, LastSeen: ago(time.Hour)}, nil, time.Time{}, "ONLINE", ""},
	} {
		n := c.node
		if c.change != nil {
			c.change(&n)
		}
		st := StatusOf(&n, c.now)
		if st.Label() != c.label || st.Note != c.note {
			t.Errorf("%s: %q, %q; want %q, %q", c.name, st.Label(), st.Note, c.label, c.note)
		}
		if st.Maintenance != n.Maintenance {
			t.Errorf("%s: maintenance %v; want the flag, %v", c.name, st.Maintenance, n.Maintenance)
		}
	}
}

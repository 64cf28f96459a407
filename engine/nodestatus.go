package engine

import (
	"fmt"
	"strings"
	"time"
)

// States a node shows besides the stored ones, judged from its row and the
// database's clock (StatusOf); never stored.
const (
	// NodeWatch: a dispatcher's heartbeat to the node went unanswered, or
	// the node is late recording that it is alive. It is still counted
	// on; a second missed heartbeat marks it OFFLINE, and its node lease
	// running out makes it LOST.
	NodeWatch NodeState = "WATCH"
	// NodeLost: the node has not recorded that it is alive for longer than
	// its node lease, so it has stopped its own runs (it or its watchdog),
	// and the dispatcher puts its jobs back in the queue.
	NodeLost NodeState = "LOST"
)

// NodeStatus is a node as operators see it: what `jobctl nodes`, its -o
// json and `jobctl top` show, all computed by StatusOf so they agree.
type NodeStatus struct {
	// State is the node's liveness: ONLINE, WATCH, LOST, OFFLINE or ERROR.
	State NodeState
	// Maintenance is the operator's flag, shown whatever the liveness.
	Maintenance bool
	// Overload is why the node's machine holds it back, for a node that
	// is alive (ONLINE or WATCH) only: a silent node's last report is stale.
	Overload Overload
	// Note says in words what is worth knowing beyond the state, as of
	// now: why it is on watch, for how long it has been silent and what
	// becomes of its jobs, why its machine holds it back; "" when nothing.
	Note string
}

// Label is the state with the flags that apply, as the STATE column shows
// it: ONLINE, ONLINE,MAINTENANCE, WATCH,OVERLOADED, LOST,MAINTENANCE.
func (s NodeStatus) Label() string {
	l := string(s.State)
	if s.Maintenance {
		l += ",MAINTENANCE"
	}
	if s.Overload.Kind != "" {
		l += ",OVERLOADED"
	}
	return l
}

// StatusOf judges a node's row (as NodeList gives it, Running included) at
// now, the database's clock: a zero now judges no silence.
//
// A node whose row says ONLINE is LOST once it has been silent longer than
// its node lease, and on WATCH while a heartbeat to it went unanswered or
// it has been silent for more than half its lease (it records its liveness
// every fifth of it). OFFLINE and ERROR are as stored.
func StatusOf(n *Node, now time.Time) NodeStatus {
	st := NodeStatus{State: n.State, Maintenance: n.Maintenance}
	if st.State == NodeMaintenance {
		st.State = NodeOnline
	}
	silent := time.Duration(0)
	if !now.IsZero() && !n.LastSeen.IsZero() {
		silent = max(now.Sub(n.LastSeen), 0)
	}
	lease := n.LeaseOf()
	var notes []string
	if st.State == NodeOnline {
		switch {
		case silent > lease:
			st.State = NodeLost
		case n.BeatMissedAt != nil:
			st.State = NodeWatch
			since := ""
			if !now.IsZero() {
				since = " " + roundAge(now.Sub(*n.BeatMissedAt)) + " ago"
			}
			notes = append(notes, "missed a heartbeat"+since+"; a second miss marks it OFFLINE")
		case silent > lease/2:
			st.State = NodeWatch
			notes = append(notes, fmt.Sprintf("late recording that it is alive: last %s ago, node lease %s", roundAge(silent), lease))
		}
	}
	// A node cleanly stopped has no jobs left: its silence is no news.
	if st.State == NodeLost || (st.State == NodeOffline && silent > lease && n.Running > 0) {
		note := fmt.Sprintf("silent for %s, past its node lease %s: it has stopped its runs", roundAge(silent), lease)
		if n.Running > 0 {
			note += fmt.Sprintf("; its %d %s being put back in the queue", n.Running, plural(n.Running, "job is", "jobs are"))
		}
		notes = append(notes, note)
	}
	if st.State == NodeOnline || st.State == NodeWatch {
		st.Overload = n.Overloaded()
		switch st.Overload.Kind {
		case OverloadLoadAvg:
			notes = append(notes, "overloaded: "+st.Overload.Reason+"; it gets work only when no node under its limit can take it")
		case OverloadLowMemory:
			notes = append(notes, "overloaded: "+st.Overload.Reason+"; it takes no new work")
		}
	}
	st.Note = strings.Join(notes, "; ")
	return st
}

// roundAge rounds a time since something for a note: tenths of a second
// under ten seconds, whole seconds above.
func roundAge(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

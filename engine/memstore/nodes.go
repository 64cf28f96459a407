package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func nodeNotFound(name string) error { return &engine.NotFoundError{What: "node", ID: name} }

// NodeClaim inserts the node's row or, with p.Former, replaces the row
// that is still as p.Former says, under the lock; see engine.Store. A
// replaced row keeps its maintenance flag; a new node starts without it.
func (s *Store) NodeClaim(_ context.Context, p engine.NodeClaimParams) (*engine.Node, error) {
	n := p.Node
	if err := engine.ValidateNodeClaim(p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	old := s.nodes[n.Name]
	maintenance := false
	switch {
	case p.Former == nil && old != nil:
		return nil, fmt.Errorf("register node %s: the name has a row: %w", n.Name, engine.ErrConflict)
	case p.Former != nil && old == nil:
		return nil, nodeNotFound(n.Name)
	case p.Former != nil:
		silent := p.Former.SilentFor == 0 || old.LastSeen.Before(now.Add(-p.Former.SilentFor))
		if !old.Process.Same(p.Former.Process) || !silent {
			return nil, fmt.Errorf("register node %s: its row is not as expected: %w", n.Name, engine.ErrConflict)
		}
		maintenance = old.Maintenance
	}
	stored := cloneNode(&n)
	stored.State, stored.Maintenance = engine.NodeOnline, maintenance
	stored.StartedAt, stored.LastSeen, stored.BeatMissedAt = now, now, nil
	stored.Load, stored.Running, stored.Dispatcher = 0, 0, false
	stored.RunningUsage = []engine.LiveUsage{} // the new process runs nothing yet
	s.nodes[n.Name] = stored
	return s.liveNode(stored, now), nil
}

// validateNode refuses what the SQL store refuses.
// shownState is the state placement and the CLI see: MAINTENANCE for an
// ONLINE node with the flag on.
func (s *Store) shownState(n *engine.Node) engine.NodeState {
	if n.State == engine.NodeOnline && n.Maintenance {
		return engine.NodeMaintenance
	}
	return n.State
}

// liveNode copies a stored node out with its live figures: the load and
// count of its load-holding jobs and whether it holds the lease now.
func (s *Store) liveNode(stored *engine.Node, now time.Time) *engine.Node {
	n := cloneNode(stored)
	s.setLive(n, stored, now)
	return n
}

// setLive sets the live figures of n, a copy of stored.
func (s *Store) setLive(n, stored *engine.Node, now time.Time) {
	n.State = s.shownState(stored)
	n.Load, n.Running = 0, 0
	if sum := s.jobs.nodeLoads[n.Name]; sum != nil {
		n.Load, n.Running = sum.Load, sum.Running
	}
	n.Dispatcher = s.lease.Owner == n.Name && s.lease.ExpiresAt.After(now)
}

// NodeGet returns the node with its live figures, or a *NotFoundError.
func (s *Store) NodeGet(_ context.Context, name string) (*engine.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[name]
	if n == nil {
		return nil, nodeNotFound(name)
	}
	return s.liveNode(n, s.now()), nil
}

// NodeList returns every node ordered by name, with its live figures.
func (s *Store) NodeList(context.Context) ([]*engine.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveNodes(s.now()), nil
}

// liveNodes copies every node out with its live figures, ordered by name.
// A dispatch round lists them all, so the copies share a few allocations
// (NodeBuffer), each still the caller's own.
func (s *Store) liveNodes(now time.Time) []*engine.Node {
	var b NodeBuffer
	return s.liveNodesInto(&b, now)
}

// NodeListInto is NodeList copying into b, reusing the room of the copies
// it made there before: those copies are overwritten, so the caller must
// be done with them. A simulation lists every node in every round, and a
// round keeps none of them past its end.
func (s *Store) NodeListInto(b *NodeBuffer) []*engine.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveNodesInto(b, s.now())
}

// NodeBuffer is the room of node copies that NodeListInto lists into again
// and again, and the order of the names it listed last.
type NodeBuffer struct {
	copies nodeCopies
	names  []string // sorted
	stored []*engine.Node
	out    []*engine.Node
}

func (s *Store) liveNodesInto(b *NodeBuffer, now time.Time) []*engine.Node {
	b.stored = s.byName(b.stored[:0], &b.names)
	b.copies.reset(b.stored)
	b.out = b.out[:0]
	for _, n := range b.stored {
		c := b.copies.clone(n)
		s.setLive(c, n, now)
		b.out = append(b.out, c)
	}
	return b.out
}

// byName appends the stored nodes to dst ordered by name. names is the
// order found last time: while the same names are registered it holds,
// and no sort is needed.
func (s *Store) byName(dst []*engine.Node, names *[]string) []*engine.Node {
	if len(*names) == len(s.nodes) {
		for _, name := range *names {
			n := s.nodes[name]
			if n == nil {
				break
			}
			dst = append(dst, n)
		}
		if len(dst) == len(s.nodes) {
			return dst // as many names, all registered: the same set
		}
		dst = dst[:0]
	}
	for _, n := range s.nodes {
		dst = append(dst, n)
	}
	slices.SortFunc(dst, func(a, b *engine.Node) int { return strings.Compare(a.Name, b.Name) })
	*names = (*names)[:0]
	for _, n := range dst {
		*names = append(*names, n.Name)
	}
	return dst
}

// NodeTouch records that the node is alive, with its reported health, and
// returns its state and maintenance flag.
func (s *Store) NodeTouch(_ context.Context, p engine.NodeTouchParams) (engine.NodeTouched, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[p.Name]
	if n == nil {
		return engine.NodeTouched{}, nodeNotFound(p.Name)
	}
	if p.Process != nil && !p.Process.Same(n.Process) {
		return engine.NodeTouched{}, engine.NodeTakenError(s.liveNode(n, s.now()))
	}
	n.LastSeen = s.now()
	n.LoadAvg, n.MemAvailable, n.Cores = p.LoadAvg, p.MemAvailable, p.Cores
	n.RunningUsage = slices.Clone(p.RunningUsage)
	if n.RunningUsage == nil {
		n.RunningUsage = []engine.LiveUsage{}
	}
	return engine.NodeTouched{State: n.State, Maintenance: n.Maintenance}, nil
}

// NodeSetState records a node's health: ONLINE, OFFLINE or ERROR.
func (s *Store) NodeSetState(_ context.Context, name string, state engine.NodeState) error {
	if err := engine.ValidateHealthState(name, state); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[name]
	if n == nil {
		return nodeNotFound(name)
	}
	n.State, n.BeatMissedAt = state, nil
	return nil
}

// NodeSetBeatMissed records a missed heartbeat, keeping the first of a
// row, or clears it.
func (s *Store) NodeSetBeatMissed(_ context.Context, name string, missed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[name]
	if n == nil {
		return nodeNotFound(name)
	}
	switch {
	case !missed:
		n.BeatMissedAt = nil
	case n.BeatMissedAt == nil:
		n.BeatMissedAt = engine.Ptr(s.now())
	}
	return nil
}

// NodeSetMaintenance sets or clears the operator's maintenance flag.
func (s *Store) NodeSetMaintenance(ctx context.Context, name string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.NodeSetMaintenance(ctx, name, on)
}

// NodeSetMaintenance sets or clears the operator's maintenance flag.
func (tx *txStore) NodeSetMaintenance(_ context.Context, name string, on bool) error {
	if err := tx.check(); err != nil {
		return err
	}
	n := tx.s.nodes[name]
	if n == nil {
		return nodeNotFound(name)
	}
	was := n.Maintenance
	n.Maintenance = on
	tx.onUndo(func() { n.Maintenance = was })
	return nil
}

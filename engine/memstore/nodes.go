package memstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// maxNodeName bounds node names as the SQL store does.
const maxNodeName = 255

func nodeNotFound(name string) error { return &engine.NotFoundError{What: "node", ID: name} }

// NodeRegister inserts the node, or takes its row over unless a live
// process holds the name (not OFFLINE, seen within StaleAfter). A takeover
// keeps the maintenance flag; a new node starts without it.
func (s *Store) NodeRegister(_ context.Context, p engine.NodeRegisterParams) (*engine.Node, error) {
	n := p.Node
	if err := validateNode(n, p.StaleAfter); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	maintenance := false
	if old := s.nodes[n.Name]; old != nil {
		if old.State != engine.NodeOffline && old.LastSeen.After(now.Add(-p.StaleAfter)) {
			age := now.Sub(old.LastSeen).Round(time.Millisecond)
			return nil, fmt.Errorf("%w: %q is %s and was last seen %s ago; stop that process or wait %s until it counts as gone",
				engine.ErrNodeOnline, n.Name, s.shownState(old), age, (p.StaleAfter - age).Round(time.Millisecond))
		}
		maintenance = old.Maintenance
	}
	stored := cloneNode(&n)
	stored.State, stored.Maintenance = engine.NodeOnline, maintenance
	stored.StartedAt, stored.LastSeen = now, now
	stored.Load, stored.Running, stored.Dispatcher = 0, 0, false
	s.nodes[n.Name] = stored
	return s.liveNode(stored, now), nil
}

// validateNode refuses what the SQL store refuses.
func validateNode(n engine.Node, staleAfter time.Duration) error {
	if strings.TrimSpace(n.Name) == "" {
		return fmt.Errorf("register node: the name is empty")
	}
	if len(n.Name) > maxNodeName {
		return fmt.Errorf("register node %.40s…: the name is longer than %d bytes", n.Name, maxNodeName)
	}
	if staleAfter < 0 {
		return fmt.Errorf("register node %s: stale-after %s is negative", n.Name, staleAfter)
	}
	if math.IsNaN(n.MaxLoad) || math.IsInf(n.MaxLoad, 0) || n.MaxLoad < 0 {
		return fmt.Errorf("register node %s: max load %v is not a number >= 0", n.Name, n.MaxLoad)
	}
	for _, f := range []struct {
		what  string
		value int
	}{{"max jobs", n.MaxJobs}, {"weight", n.Weight}, {"cores", n.Cores}} {
		if f.value < 0 || f.value > math.MaxInt32 {
			return fmt.Errorf("register node %s: %s %d is out of range", n.Name, f.what, f.value)
		}
	}
	return nil
}

// shownState is the state placement and the CLI see: MAINTENANCE for an
// ONLINE node with the flag on.
func (s *Store) shownState(n *engine.Node) engine.NodeState {
	if n.State == engine.NodeOnline && n.Maintenance {
		return engine.NodeMaintenance
	}
	return n.State
}

// liveNode copies a stored node out with its live figures: the load of its
// load-holding jobs (summed in id order, so the sum is the same every
// time) and whether it holds the lease now.
func (s *Store) liveNode(stored *engine.Node, now time.Time) *engine.Node {
	n := cloneNode(stored)
	n.State = s.shownState(stored)
	if holding := s.jobs.loadHolding[n.Name]; holding != nil {
		holding.Ascend(func(id int64) bool {
			n.Load += s.jobs.byID[id].Load
			n.Running++
			return true
		})
	}
	n.Dispatcher = s.lease.Owner == n.Name && s.lease.ExpiresAt.After(now)
	return n
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
	now := s.now()
	out := make([]*engine.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, s.liveNode(n, now))
	}
	slices.SortFunc(out, func(a, b *engine.Node) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// NodeTouch records that the node is alive, with its reported health.
func (s *Store) NodeTouch(_ context.Context, p engine.NodeTouchParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[p.Name]
	if n == nil {
		return nodeNotFound(p.Name)
	}
	n.LastSeen = s.now()
	n.LoadAvg, n.MemAvailable, n.Cores = p.LoadAvg, p.MemAvailable, p.Cores
	return nil
}

// NodeSetState records a node's health: ONLINE, OFFLINE or ERROR.
func (s *Store) NodeSetState(_ context.Context, name string, state engine.NodeState) error {
	switch state {
	case engine.NodeOnline, engine.NodeOffline, engine.NodeError:
	case engine.NodeMaintenance:
		// Not a stored state: storing it would let the next health write
		// end the maintenance.
		return fmt.Errorf("set state of node %s: MAINTENANCE is not a health state; use NodeSetMaintenance", name)
	default:
		return fmt.Errorf("set state of node %s: unknown state %q (valid: ONLINE, OFFLINE, ERROR)", name, state)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[name]
	if n == nil {
		return nodeNotFound(name)
	}
	n.State = state
	return nil
}

// NodeSetMaintenance sets or clears the operator's maintenance flag.
func (s *Store) NodeSetMaintenance(_ context.Context, name string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[name]
	if n == nil {
		return nodeNotFound(name)
	}
	n.Maintenance = on
	return nil
}

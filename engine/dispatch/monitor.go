package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Heartbeat timeouts: a heartbeat waits as long as its interval, so a beat
// never overlaps the next, but at least MinHeartbeatTimeout (a loaded
// machine answers a short interval late without being dead) and at most
// MaxHeartbeatTimeout (a node that slow to answer is as good as gone).
const (
	MinHeartbeatTimeout = 100 * time.Millisecond
	MaxHeartbeatTimeout = 10 * time.Second
)

// HeartbeatTimeout is how long a heartbeat sent every interval waits for
// its answer.
func HeartbeatTimeout(interval time.Duration) time.Duration {
	return min(max(interval, MinHeartbeatTimeout), MaxHeartbeatTimeout)
}

// Monitor sends heartbeats to the other nodes: one missed beat puts a node on
// the watch list, the second in a row marks it OFFLINE, which keeps new
// work off it. Its jobs are recovered only once it is silent in the store
// past its node lease (recoverSilentNodes), not by heartbeats. The watch is
// recorded in the store too (NodeSetBeatMissed), so 'jobctl nodes' and the
// dashboard show it, and the next answered beat clears it.
type Monitor struct {
	store   MonitorStore
	self    string
	check   func(ctx context.Context, n *engine.Node) error
	timeout time.Duration
	log     *slog.Logger

	mu      sync.Mutex
	watched map[string]int // node → missed beats in a row
}

// NewMonitor returns a monitor for the node named self; check sends one
// heartbeat and returns nil when the node answered as expected.
func NewMonitor(store MonitorStore, self string, check func(context.Context, *engine.Node) error, timeout time.Duration, log *slog.Logger) *Monitor {
	return &Monitor{store: store, self: self, check: check, timeout: timeout, log: log, watched: map[string]int{}}
}

// Beat checks every live node once, concurrently.
func (m *Monitor) Beat(ctx context.Context) error {
	nodes, err := m.store.NodeList(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, n := range nodes {
		if n.Name == m.self || (n.State != engine.NodeOnline && n.State != engine.NodeMaintenance) {
			m.forget(n.Name)
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, m.timeout)
			defer cancel()
			m.record(ctx, n, m.check(cctx, n))
		})
	}
	wg.Wait()
	return nil
}

func (m *Monitor) forget(name string) {
	m.mu.Lock()
	delete(m.watched, name)
	m.mu.Unlock()
}

func (m *Monitor) record(ctx context.Context, n *engine.Node, err error) {
	if ctx.Err() != nil {
		return // shutting down: a cancelled check says nothing about the node
	}
	m.mu.Lock()
	if err == nil {
		delete(m.watched, n.Name)
		m.mu.Unlock()
		if n.BeatMissedAt != nil {
			if err := m.store.NodeSetBeatMissed(ctx, n.Name, false); err != nil {
				m.log.Warn("cannot record that a node answered its heartbeat", "peer", n.Name, "err", err)
			}
		}
		return
	}
	m.watched[n.Name]++
	missed := m.watched[n.Name]
	m.mu.Unlock()
	if missed < 2 {
		m.log.Warn("node missed a heartbeat; watching it", "peer", n.Name, "err", err)
		if err := m.store.NodeSetBeatMissed(ctx, n.Name, true); err != nil {
			m.log.Warn("cannot record the missed heartbeat", "peer", n.Name, "err", err)
		}
		return
	}
	if err := m.store.NodeSetState(ctx, n.Name, engine.NodeOffline); err != nil {
		m.log.Error("cannot mark node offline", "peer", n.Name, "err", err)
		return
	}
	m.forget(n.Name)
	m.log.Warn("node missed two heartbeats in a row; marked OFFLINE", "peer", n.Name, "err", err)
}

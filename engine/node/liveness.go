package node

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobctl/jobctl/engine"
)

// liveness records that this node is alive, with its health, every fifth
// of its node lease, and keeps the node's record ONLINE. Each record moves
// the fence's deadline; what a record learns (maintenance, a node marked
// OFFLINE while alive) is acted on at once or handed to its check loop.
// The check loop also restarts jobs the store says run here that the
// runner has lost track of.
type liveness struct {
	name  string
	lease time.Duration // the node lease
	// maxLoadAvg and reservedMemory are the overload gate's limits.
	maxLoadAvg     float64
	reservedMemory int64
	store          livenessStore
	log            *slog.Logger
	health         func() HealthReading // this machine's load average and free memory
	fence          *fence
	books          maintenanceBooks
	// usage is what each job process running here has used so far.
	usage func() []engine.LiveUsage
	// recoverOrphans restarts the jobs the store says run here that the
	// runner has no run and no result of.
	recoverOrphans func(ctx context.Context) error
	overloaded     prometheus.Gauge
	// random spreads the looks for orphaned jobs of nodes started
	// together: numbers in [0, 1).
	random func() float64

	// process is this process as registered: its touches apply only while
	// the row still names it. Set before the loops start.
	process engine.NodeProcess
	// markedOffline carries, from the touch loop to the check loop, that
	// others marked this node OFFLINE while it was alive.
	markedOffline chan struct{}
	// touched, where set, is called after each liveness write, written or
	// not (connKeeper.look).
	touched func()

	mu       sync.Mutex
	overload engine.Overload // as last seen by the touch loop
}

func newLiveness(cfg Config, store livenessStore, f *fence, books maintenanceBooks, usage func() []engine.LiveUsage,
	recoverOrphans func(ctx context.Context) error, overloaded prometheus.Gauge, log *slog.Logger) *liveness {
	return &liveness{name: cfg.Name, lease: cfg.NodeLease, maxLoadAvg: cfg.MaxLoadAvg, reservedMemory: cfg.ReservedMemory,
		store: store, log: log, health: ReadHealth, fence: f, books: books, usage: usage, recoverOrphans: recoverOrphans,
		overloaded: overloaded, random: rand.Float64, markedOffline: make(chan struct{}, 1)}
}

// livenessStore is what liveness writes: the node's own record.
type livenessStore interface {
	NodeTouch(ctx context.Context, p engine.NodeTouchParams) (engine.NodeTouched, error)
	NodeSetState(ctx context.Context, name string, state engine.NodeState) error
}

// maintenanceBooks take whether the node is in maintenance
// (placement.Books), as its record says.
type maintenanceBooks interface {
	SetMaintenance(bool)
}

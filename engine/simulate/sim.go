package simulate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// DefaultInterval is `jobctl serve`'s default dispatch interval.
const DefaultInterval = 2 * time.Second

// epoch is the virtual clock's time zero before node ages are applied: a
// fixed instant, so runs are repeatable.
var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Config is one simulation run.
type Config struct {
	Nodes    []NodeSpec // checked by CheckNodes
	Jobs     []JobSpec  // checked by CheckJobs
	Selector string     // a placement selector name; "" is loadfactor
	Seed     uint64     // drives the random selector and backoff jitter
	Interval time.Duration
	// Timeline records every node's load over time in the result.
	Timeline bool
	// Progress, if set, is told now and then how far the run is.
	Progress func(Progress)
}

// Progress is how far a run is.
type Progress struct {
	Selector        string
	Submitted, Done int // jobs submitted and jobs placed so far
	Total           int
	At              time.Duration // simulated time
}

// Result is what one run did.
type Result struct {
	Selector string `json:"selector"`
	// Placements are in the order the nodes accepted the jobs.
	Placements []Placement `json:"placements"`
	Summary    Summary     `json:"summary"`
	// Timeline is every node's load over time (Config.Timeline).
	Timeline *Timeline `json:"-"`
	// Rounds is how many dispatch rounds ran.
	Rounds int `json:"-"`
	// Left says why the jobs never placed still wait, as the dispatcher
	// sums up its last round ("2 jobs wait: type"); "" when none is left.
	Left string `json:"-"`
}

// Placement is one job started on one node; times are seconds from the
// start of the run, EndS nil for a job that never ends.
type Placement struct {
	Job    int64    `json:"job"`
	Node   string   `json:"node"`
	StartS float64  `json:"start_s"`
	EndS   *float64 `json:"end_s"`
}

// sim is the state of one run.
type sim struct {
	cfg   Config
	ctx   context.Context
	clock *engine.VirtualClock
	store *store
	zero  time.Time // the run's time zero on the virtual clock
	now   time.Duration

	nodes    map[string]*simNode
	nodeList []*simNode
	rows     []*engine.Node // as registered, for submit's service defaults
	rng      *rand.Rand

	order   []int           // workload indexes in submit order
	arrived int             // how many of order are submitted
	index   map[int64]int32 // workload id → workload index, when there are parents
	// byStore is the workload index of each store id. The run's store
	// counts its ids up from 1, one per job inserted, so a slice holds
	// them densely, where a map of a million entries costs a cache miss
	// per look-up.
	byStore []int32
	storeID []int64 // per workload index, once submitted
	endings endings
	seq     uint64

	placements []Placement
	waits      []time.Duration
	declines   int
	rounds     int
	// ended counts the jobs ended since the store last pruned them.
	ended     int
	resumed   int // jobs running from the start, not placed by the run
	maxFactor float64
	err       error // the first store failure inside an offer

	// Room OfferBatch reuses from one call to the next: the dispatcher
	// offers to one node after another (SetSequentialOffers).
	takenBuf  []int
	updateBuf []engine.JobUpdate
}

// Run simulates the workload on the nodes with one selector.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Selector == "" {
		cfg.Selector = placement.SelectorLoadFactor
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	selector, err := newSelector(cfg.Selector, cfg.Seed)
	if err != nil {
		return nil, err
	}
	s := &sim{
		cfg: cfg, ctx: ctx, clock: engine.NewVirtualClock(epoch), nodes: map[string]*simNode{},
		rng:     rand.New(rand.NewPCG(cfg.Seed, 2)),
		order:   submitOrder(cfg.Jobs),
		byStore: make([]int32, 1, len(cfg.Jobs)+1),
		// Every job is placed at most once in a run that never fails one.
		placements: make([]Placement, 0, len(cfg.Jobs)),
		waits:      make([]time.Duration, 0, len(cfg.Jobs)),
		storeID:    make([]int64, len(cfg.Jobs)),
	}
	if slices.ContainsFunc(cfg.Jobs, func(j JobSpec) bool { return j.Parent != 0 }) {
		// Only parents are looked up by workload id: a workload without
		// any needs no map of a million jobs.
		s.index = make(map[int64]int32, len(cfg.Jobs))
		for i, j := range cfg.Jobs {
			s.index[j.ID] = int32(i)
		}
	}
	s.store = newStore(s.clock)
	defer s.store.Close()
	if err := s.registerNodes(); err != nil {
		return nil, err
	}
	if err := s.resumeRunning(); err != nil {
		return nil, err
	}
	d := dispatch.NewDispatcher(s.store, s, selector, s.clock, slog.New(slog.DiscardHandler))
	d.SetSequentialOffers()
	last, err := s.loop(d)
	if err != nil {
		return nil, err
	}
	// A round offers each node its share in turn: jobs starting at the
	// same moment are listed by id, as they were submitted.
	slices.SortStableFunc(s.placements, func(a, b Placement) int {
		return cmp.Or(cmp.Compare(a.StartS, b.StartS), cmp.Compare(a.Job, b.Job))
	})
	res := &Result{Selector: selector.Name(), Placements: s.placements, Summary: s.summary(), Rounds: s.rounds}
	if res.Summary.NeverPlaced > 0 {
		res.Left = last.Summary()
	}
	if cfg.Timeline {
		res.Timeline = s.timeline()
	}
	return res, nil
}

// newSelector is the engine's selector of that name; the random one draws
// from the run's seed so that a run can be repeated.
func newSelector(name string, seed uint64) (placement.Selector, error) {
	sel, err := placement.ParseSelector(name)
	if err != nil {
		return nil, err
	}
	if sel.Name() == placement.SelectorRandom {
		sel = placement.NewRandom(rand.New(rand.NewPCG(seed, 1)))
	}
	return sel, nil
}

// registerNodes registers every node so that, at the run's time zero, each
// has been up for its started_ago: the clock only runs forward, so the
// oldest registers first.
func (s *sim) registerNodes() error {
	specs := make([]*NodeSpec, len(s.cfg.Nodes))
	var oldest time.Duration
	for i := range s.cfg.Nodes {
		specs[i] = &s.cfg.Nodes[i]
		oldest = max(oldest, time.Duration(specs[i].StartedAgo))
	}
	slices.SortStableFunc(specs, func(a, b *NodeSpec) int { return cmp.Compare(b.StartedAgo, a.StartedAgo) })
	for _, spec := range specs {
		s.clock.Set(epoch.Add(oldest - time.Duration(spec.StartedAgo)))
		n := newSimNode(spec)
		if _, err := engine.RegisterNode(s.ctx, s.store, engine.NodeRegisterParams{Node: n.row()}); err != nil {
			return fmt.Errorf("registering node %s: %w", spec.Name, err)
		}
		s.nodes[spec.Name] = n
	}
	s.zero = epoch.Add(oldest)
	s.clock.Set(s.zero)
	for i := range s.cfg.Nodes {
		spec := &s.cfg.Nodes[i]
		s.nodeList = append(s.nodeList, s.nodes[spec.Name])
		if _, err := s.store.NodeTouch(s.ctx, engine.NodeTouchParams{Name: spec.Name, LoadAvg: spec.LoadAvg,
			MemAvailable: int64(spec.Memory), Cores: spec.Cores}); err != nil {
			return err
		}
	}
	rows, err := s.store.Nodes(s.ctx)
	s.rows = rows
	return err
}

// fail keeps the first store failure seen inside an offer, which cannot
// return one, so the round's caller reports it.
func (s *sim) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// seconds is a simulated time in seconds, to the millisecond.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

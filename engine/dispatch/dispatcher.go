package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// Offerer hands jobs to one node in one request and returns the node's
// verdict on each, in the order of the offers. The HTTP client implements it
// for remote nodes; the dispatcher's own node answers in-process through
// the same acceptance code.
type Offerer interface {
	OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult
}

// LocalOfferer is an Offerer one of whose nodes runs in the dispatcher's
// own process: a round hands that node its share as jobs, without HTTP,
// and the node's acceptance judges them as it judges offers.
type LocalOfferer interface {
	Offerer
	// Local reports whether n is the dispatcher's own node.
	Local(n *engine.Node) bool
	// StartLocal offers the own node jobs as the round read them, under
	// the round's lease term, a verdict each in their order.
	StartLocal(ctx context.Context, term engine.LeaseTerm, jobs []*engine.Job) []engine.OfferResult
}

// OfferFunc is an Offerer that answers one offer at a time.
type OfferFunc func(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult

// OfferBatch asks f about each offer in turn.
func (f OfferFunc) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	out := make([]engine.OfferResult, len(offers))
	for i, o := range offers {
		out[i] = f(ctx, n, o)
	}
	return out
}

// ErrUntrusted ends a round early: the lease can no longer be trusted.
var ErrUntrusted = errors.New("lease no longer trusted")

// DefaultPageSize is how many dispatchable jobs a round reads, plans and
// offers at a time. Each page costs the database a plan of its read (about
// 3 ms on PostgreSQL, however few jobs it holds) and each batch of starts a
// store call; pages of 2000 halve both against 1000. The SQL stores' chunk
// of transitions is as large, so a page's starts on one node are at most
// two statements where UPDATE returns rows (the node starts a large batch
// in two halves at once).
const DefaultPageSize = 2000

// Dispatcher runs dispatch rounds on the lease holder. It keeps no state
// of its own between rounds that a successor would need: the nodes kept for
// oversized jobs live in the store, so a new lease holder honours them.
type Dispatcher struct {
	store    Store
	offerer  Offerer
	local    LocalOfferer // offerer, when one of its nodes is in-process
	selector placement.Selector
	clock    engine.Clock
	log      *slog.Logger
	pageSize int
	// terms tells the lease term rounds work under; nil: none.
	terms   TermSource
	summary *SummaryLog
	// sequential: a batch is offered to one node after another, not to
	// every node at once, so a simulation replays exactly.
	sequential bool

	// long: the last page read of a queue was full, so the queue is likely
	// long (JobDispatchableParams.Long). Guarded by mu.
	long map[queueKey]bool

	// mu keeps rounds one at a time: they share the selector's rotation.
	mu sync.Mutex
}

// NewDispatcher returns a dispatcher ordering candidates with selector.
func NewDispatcher(store Store, offerer Offerer, selector placement.Selector, clock engine.Clock, log *slog.Logger) *Dispatcher {
	local, _ := offerer.(LocalOfferer)
	return &Dispatcher{
		store: store, offerer: offerer, local: local, selector: selector, clock: clock, log: log,
		pageSize: DefaultPageSize,
		summary:  NewSummaryLog(log, clock, DefaultSummaryInterval),
		long:     map[queueKey]bool{},
	}
}

// SetPageSize changes how many jobs a round reads at a time.
func (d *Dispatcher) SetPageSize(n int) {
	if n > 0 {
		d.pageSize = n
	}
}

// SetSequentialOffers makes a round offer each node its share in turn, in
// a fixed order, instead of all at once: slower, but deterministic.
func (d *Dispatcher) SetSequentialOffers() { d.sequential = true }

// TermSource tells the lease term its holder works under (LeaseHolder).
type TermSource interface {
	// Term is the term held now, the zero LeaseTerm when none is.
	Term() engine.LeaseTerm
}

// SetLease makes rounds work under the lease term terms tells: each offer
// carries it, so a node starts a job only while that term is current, and
// silent nodes' jobs are recovered (recoverSilentNodes), which needs the
// term's start. A dispatcher without one recovers nothing and offers
// without a term (a simulation, a test of placement).
func (d *Dispatcher) SetLease(terms TermSource) { d.terms = terms }

// SetSummaryInterval changes how often an unchanged summary of waiting
// jobs is logged again (default DefaultSummaryInterval).
func (d *Dispatcher) SetSummaryInterval(v time.Duration) {
	d.summary = NewSummaryLog(d.log, d.clock, v)
}

// Round places every dispatchable job it can. trusted is asked before every
// offer; the round stops with ErrUntrusted once it says no. A round that
// leaves jobs waiting logs why (SummaryLog).
func (d *Dispatcher) Round(ctx context.Context, trusted func() bool) (RoundStats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var term engine.LeaseTerm
	if d.terms != nil {
		// A dispatcher that works under a lease never offers without
		// its term: such offers would start jobs unguarded.
		if term = d.terms.Term(); !term.Held() {
			return RoundStats{}, ErrUntrusted
		}
	}
	r := &round{Dispatcher: d, ctx: ctx, trusted: trusted, term: term, unreachable: map[string]bool{},
		closed: map[string]bool{}, acceptedChild: map[int64]bool{}, debug: d.log.Enabled(ctx, slog.LevelDebug)}
	err := r.run()
	if err == nil {
		d.summary.Log(r.stats)
	}
	return r.stats, err
}

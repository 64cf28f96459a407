package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// Offerer hands one job to one node and returns the node's verdict. The
// HTTP client implements it for remote nodes; the dispatcher's own node
// answers in-process through the same acceptance code.
type Offerer interface {
	Offer(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult
}

// ErrUntrusted ends a round early: the lease can no longer be trusted.
var ErrUntrusted = errors.New("lease no longer trusted")

// DefaultPageSize is how many dispatchable jobs a round reads at a time.
const DefaultPageSize = 100

// Dispatcher runs dispatch rounds on the lease holder (DESIGN.md §4).
type Dispatcher struct {
	store    engine.Store
	offerer  Offerer
	selector placement.Selector
	clock    engine.Clock
	log      *slog.Logger
	pageSize int
	// staleAfter: an OFFLINE node silent this long has its jobs recovered.
	staleAfter time.Duration

	mu sync.Mutex
	// reserved remembers oversized jobs with the node that is to run them
	// (the priority list): no other job is placed on that node meanwhile, so
	// it drains and the oversized job runs there as soon as it is idle.
	reserved map[int64]string
}

// NewDispatcher returns a dispatcher ordering candidates with selector.
func NewDispatcher(store engine.Store, offerer Offerer, selector placement.Selector, clock engine.Clock, log *slog.Logger) *Dispatcher {
	return &Dispatcher{
		store: store, offerer: offerer, selector: selector, clock: clock, log: log,
		pageSize: DefaultPageSize, staleAfter: engine.NodeStaleAfter, reserved: map[int64]string{},
	}
}

// SetPageSize changes how many jobs a round reads at a time.
func (d *Dispatcher) SetPageSize(n int) {
	if n > 0 {
		d.pageSize = n
	}
}

// SetNodeStaleAfter changes how long an OFFLINE node must have been silent
// before its jobs are recovered (default engine.NodeStaleAfter).
func (d *Dispatcher) SetNodeStaleAfter(v time.Duration) { d.staleAfter = v }

// RoundStats counts what one round did.
type RoundStats struct {
	Considered int // dispatchable jobs looked at
	Dispatched int // accepted by a node
	Failed     int // refused permanently (412)
	Recovered  int // taken back from offline nodes or stale dispatches
}

// round is the state of one dispatch round.
type round struct {
	*Dispatcher
	ctx     context.Context
	trusted func() bool
	nodes   []*engine.Node
	// siblingsRunning caches, per parent, whether any child already runs.
	siblingsRunning map[int64]bool
	// unreachable are nodes whose endpoint did not answer this round: they
	// get no more offers until the next one.
	unreachable map[string]bool
	// heldFor maps each reserved node to the oversized job it is kept for.
	heldFor map[string]int64
	stats   RoundStats
}

// Round places every dispatchable job it can. trusted is asked before every
// offer; the round stops with ErrUntrusted once it says no.
func (d *Dispatcher) Round(ctx context.Context, trusted func() bool) (RoundStats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := &round{Dispatcher: d, ctx: ctx, trusted: trusted, siblingsRunning: map[int64]bool{}, unreachable: map[string]bool{}}
	if err := r.reclaimStaleDispatches(); err != nil {
		return r.stats, err
	}
	if err := r.loadNodes(); err != nil {
		return r.stats, err
	}
	if err := r.recoverOfflineNodes(); err != nil {
		return r.stats, err
	}
	if err := r.pruneReservations(); err != nil {
		return r.stats, err
	}
	r.heldFor = make(map[string]int64, len(d.reserved))
	for id, name := range d.reserved {
		r.heldFor[name] = id
	}
	var workflows []*engine.Job
	for _, status := range []engine.Status{engine.StatusRestart, engine.StatusQueued} {
		var after int64
		for {
			page, err := d.store.JobListDispatchable(ctx, engine.JobDispatchableParams{Status: status, AfterID: after, Limit: d.pageSize})
			if err != nil {
				return r.stats, err
			}
			for _, job := range page {
				after = job.ID
				if job.Type == engine.TypeWorkflow {
					workflows = append(workflows, job)
					continue
				}
				if err := r.place(job); err != nil {
					return r.stats, err
				}
			}
			if len(page) < d.pageSize {
				break
			}
		}
	}
	// Workflow steps go last, so the work they stand for is placed first.
	for _, job := range workflows {
		if err := r.place(job); err != nil {
			return r.stats, err
		}
	}
	return r.stats, nil
}

// pruneReservations frees the nodes kept for oversized jobs that are no
// longer dispatchable — placed, cancelled, or now blocked by their key —
// judged by the same query that pages dispatchable jobs.
func (r *round) pruneReservations() error {
	for id := range r.reserved {
		job, err := r.store.JobGet(r.ctx, id)
		if errors.Is(err, engine.ErrNotFound) {
			delete(r.reserved, id)
			continue
		}
		if err != nil {
			return err
		}
		still := false
		if job.Status.Dispatchable() {
			page, err := r.store.JobListDispatchable(r.ctx, engine.JobDispatchableParams{Status: job.Status, AfterID: id - 1, Limit: 1})
			if err != nil {
				return err
			}
			still = len(page) == 1 && page[0].ID == id
		}
		if !still {
			delete(r.reserved, id)
		}
	}
	return nil
}

// reclaimStaleDispatches puts back jobs left DISPATCHING by an earlier round
// (this or a former holder that died mid-offer). No offer of this
// dispatcher is in flight between rounds, and the version bump fences a late
// acceptance by the node, so none of them can run twice.
func (r *round) reclaimStaleDispatches() error {
	stale, err := r.store.JobList(r.ctx, engine.JobListParams{Statuses: []engine.Status{engine.StatusDispatching}})
	if err != nil {
		return err
	}
	for _, job := range stale {
		if _, err := r.store.JobUpdate(r.ctx, engine.JobUpdate{
			ID: job.ID, From: job.Status, Version: job.Version, To: engine.StatusRestart,
			Node: engine.Ptr(""), Message: engine.Ptr("dispatch to " + job.Node + " was interrupted"),
		}); err != nil && !errors.Is(err, engine.ErrConflict) {
			return err
		}
		r.stats.Recovered++
	}
	return nil
}

func (r *round) loadNodes() error {
	nodes, err := r.store.NodeList(r.ctx)
	if err != nil {
		return err
	}
	r.nodes = nodes
	return nil
}

// recoverOfflineNodes restarts the load-holding jobs of nodes marked OFFLINE
// that have also stopped touching the database: their processes died with
// the node, and fencing rejects any late result of theirs. A node marked
// OFFLINE by heartbeats that still reaches the database is alive (it will
// mark itself ONLINE again), so its jobs are left to it.
func (r *round) recoverOfflineNodes() error {
	var now time.Time
	for _, n := range r.nodes {
		if n.State != engine.NodeOffline || n.Running == 0 {
			continue
		}
		if now.IsZero() {
			var err error
			if now, err = r.store.Now(r.ctx); err != nil {
				return err
			}
		}
		if now.Sub(n.LastSeen) < r.staleAfter {
			continue
		}
		jobs, err := r.store.JobList(r.ctx, engine.JobListParams{Node: n.Name, Statuses: engine.RecoverableStatuses})
		if err != nil {
			return err
		}
		for _, job := range jobs {
			u := engine.RecoverUpdate(job, "node "+n.Name+" went offline")
			if _, err := r.store.JobUpdate(r.ctx, u); err != nil && !errors.Is(err, engine.ErrConflict) {
				return err
			}
			r.log.Warn("recovered job of offline node", "job", job.ID, "from", n.Name, "status", u.To)
			r.stats.Recovered++
		}
		n.Load, n.Running = 0, 0
	}
	return nil
}

// firstChild reports whether job is the first non-workflow child of a parent
// none of whose children run yet; such a job may queue ahead on any node.
func (r *round) firstChild(job *engine.Job) (bool, error) {
	if job.ParentID == nil || job.Type == engine.TypeWorkflow {
		return false, nil
	}
	running, ok := r.siblingsRunning[*job.ParentID]
	if !ok {
		sibs, err := r.store.JobList(r.ctx, engine.JobListParams{ParentID: job.ParentID, Statuses: engine.LoadHoldingStatuses, Limit: 1})
		if err != nil {
			return false, err
		}
		running = len(sibs) > 0
		r.siblingsRunning[*job.ParentID] = running
	}
	return !running, nil
}

// place offers one job to its candidates in order until one accepts.
func (r *round) place(job *engine.Job) error {
	r.stats.Considered++
	first, err := r.firstChild(job)
	if err != nil {
		return err
	}
	p := placement.Filter(job, r.nodes, placement.FilterOptions{FirstChild: first, Reserved: r.heldFor})
	order := r.selector.Order(job, p.Eligible, r.clock.Now())
	origin := job.Status
	for _, n := range order {
		if r.unreachable[n.Name] {
			continue
		}
		if !r.trusted() {
			return r.putBack(job, origin, ErrUntrusted)
		}
		marked, err := r.store.JobUpdate(r.ctx, engine.JobUpdate{
			ID: job.ID, From: job.Status, Version: job.Version, To: engine.StatusDispatching, Node: engine.Ptr(n.Name),
		})
		if errors.Is(err, engine.ErrConflict) || errors.Is(err, engine.ErrNotFound) {
			return nil // changed meanwhile (cancelled, paused): nothing to place
		}
		if err != nil {
			return err
		}
		job = marked
		res := r.offerer.Offer(r.ctx, n, engine.DispatchOffer{
			JobID: job.ID, Attempt: job.Attempt, Version: job.Version, Type: job.Type, Load: job.Load,
		})
		r.log.Debug("offered job", "job", job.ID, "target", n.Name, "verdict", res.Verdict, "reason", res.Reason)
		switch res.Verdict {
		case engine.OfferAccepted:
			n.Load += job.Load
			n.Running++
			if held, ok := r.reserved[job.ID]; ok {
				delete(r.heldFor, held)
				delete(r.reserved, job.ID)
			}
			if job.ParentID != nil {
				r.siblingsRunning[*job.ParentID] = true
			}
			r.stats.Dispatched++
			return nil
		case engine.OfferRefused:
			_, err := r.store.JobUpdate(r.ctx, engine.JobUpdate{
				ID: job.ID, From: job.Status, Version: job.Version, To: engine.StatusFailed, MarkFinished: true,
				Message: engine.Ptr(fmt.Sprintf("refused by node %s: %s", n.Name, res.Reason)),
			})
			if err != nil && !errors.Is(err, engine.ErrConflict) {
				return err
			}
			r.stats.Failed++
			return nil
		case engine.OfferGone, engine.OfferUnknownJob:
			return nil
		case engine.OfferError:
			r.unreachable[n.Name] = true
			r.log.Warn("node did not answer an offer", "target", n.Name, "job", job.ID, "err", res.Reason)
		}
		// Declined or unreachable: the next candidate.
	}
	if p.Oversized {
		r.reserveForOversized(job)
	}
	return r.putBack(job, origin, nil)
}

// putBack returns a job no node took to the state it was dispatched from.
func (r *round) putBack(job *engine.Job, origin engine.Status, cause error) error {
	if job.Status != engine.StatusDispatching {
		return cause
	}
	_, err := r.store.JobUpdate(r.ctx, engine.JobUpdate{
		ID: job.ID, From: job.Status, Version: job.Version, To: origin, Node: engine.Ptr(""),
	})
	if err != nil && !errors.Is(err, engine.ErrConflict) {
		return err
	}
	return cause
}

// reserveForOversized remembers an oversized job with the least loaded of the
// largest nodes that accept oversized jobs, unless it is remembered already.
func (r *round) reserveForOversized(job *engine.Job) {
	if _, ok := r.reserved[job.ID]; ok {
		return
	}
	var best *engine.Node
	for _, n := range r.nodes {
		if n.State != engine.NodeOnline || !n.Offers(job.Type) || !n.AcceptExceeding {
			continue
		}
		if _, busy := r.heldFor[n.Name]; busy {
			continue
		}
		if best == nil || n.MaxLoad > best.MaxLoad ||
			(n.MaxLoad == best.MaxLoad && (n.Load < best.Load || (n.Load == best.Load && n.Name < best.Name))) {
			best = n
		}
	}
	if best != nil {
		r.reserved[job.ID] = best.Name
		r.heldFor[best.Name] = job.ID
		r.log.Info("oversized job waits for a node to drain", "job", job.ID, "load", job.Load, "target", best.Name, "max_load", best.MaxLoad)
	}
}

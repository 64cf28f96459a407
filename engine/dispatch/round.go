package dispatch

import (
	"context"
	"errors"
	"sync"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// round is the state of one dispatch round.
type round struct {
	*Dispatcher
	*cluster
	ctx     context.Context
	trusted func() bool
	// term is the lease term the round works under, read at its start.
	term engine.LeaseTerm
	// unreachable are nodes whose endpoint did not answer this round: they
	// get no more offers until the next one.
	unreachable map[string]bool
	// closed are nodes that declined an offer this round: their own books
	// are fuller than the round's, so they get no more offers until the
	// next one.
	closed map[string]bool
	// acceptedChild marks the parents a child was accepted for this round.
	acceptedChild map[int64]bool
	// debug: offers are logged one by one (asked once per round).
	debug bool
	// done are the jobs placed ahead of the queue (those kept a node),
	// which the pages skip.
	done map[int64]bool
	// p is reused for every job of the round.
	p     placement.Placement
	room  room
	stats RoundStats
	// quotas are what the round may still start of each limited type.
	quotas quotas
}

func (r *round) run() error {
	// The reclaim, the cluster's reads and the first page of each queue are
	// independent: they go to the database at once, which saves round trips
	// of every round, as a job waiting in a short queue feels. A reclaim or
	// recovery that moved jobs changed the nodes' loads and the queues, so
	// those are read again then (rare: only an interrupted round or a dead
	// node leaves any).
	var (
		wg                           sync.WaitGroup
		c                            *cluster
		kept                         []*engine.Job
		stale                        []int64
		reclaimErr, loadErr, pageErr error
		limitErr, rollbackErr        error
		rollbacks                    []*engine.Job
		first                        = make([][]*engine.Job, len(engine.DispatchableStatuses))
		pageErrs                     = make([]error, len(engine.DispatchableStatuses))
	)
	wg.Go(func() { reclaimErr = r.reclaimStaleDispatches() })
	wg.Go(func() { c, kept, stale, loadErr = loadCluster(r.ctx, r.Dispatcher.store) })
	wg.Go(func() { r.quotas, limitErr = readQuotas(r.ctx, r.Dispatcher.store) })
	// A job that failed finally gets its rollback job here, on the lease
	// holder; the new job is queued, which wakes the next round for it.
	wg.Go(func() { rollbacks, rollbackErr = engine.SpawnRollbacks(r.ctx, r.Dispatcher.store) })
	for i, status := range engine.DispatchableStatuses {
		wg.Go(func() { first[i], pageErrs[i] = r.page(status, 0) })
	}
	wg.Wait()
	pageErr = errors.Join(pageErrs...)
	r.stats.Rollbacks = len(rollbacks)
	for _, job := range rollbacks {
		r.log.Info("rollback job created", "job", job.ID, "rollback_of", *job.RollbackOf, "key", job.Key)
	}
	if rollbackErr != nil {
		// One spec that cannot become a job must not stop dispatch: its
		// key stays held, and explain says why.
		r.log.Warn("rollback jobs", "error", rollbackErr)
	}
	if err := errors.Join(reclaimErr, loadErr, pageErr, limitErr); err != nil {
		return err
	}
	if r.stats.Recovered > 0 {
		var err error
		if c, kept, stale, err = loadCluster(r.ctx, r.Dispatcher.store); err != nil {
			return err
		}
	}
	r.cluster = c
	if err := r.recoverSilentNodes(); err != nil {
		return err
	}
	if r.stats.Recovered > 0 {
		clear(first)
		// The jobs taken back no longer run: count the types again.
		var err error
		if r.quotas, err = readQuotas(r.ctx, r.Dispatcher.store); err != nil {
			return err
		}
	}
	for _, id := range stale {
		if err := r.Dispatcher.store.ReservationDelete(r.ctx, id); err != nil {
			return err
		}
	}
	r.noteOverloads()
	r.room.reset(r.nodes)
	// Jobs that keep a node go first: the node was drained for them.
	r.done = make(map[int64]bool, len(kept))
	for _, job := range kept {
		r.done[job.ID] = true
	}
	if err := r.placeAll(kept); err != nil {
		return err
	}
	var workflows []*engine.Job
	batch := make([]*engine.Job, 0, r.pageSize)
	for i, status := range engine.DispatchableStatuses {
		var after int64
		for {
			page := first[i]
			if after > 0 || page == nil {
				var err error
				if page, err = r.page(status, after); err != nil {
					return err
				}
			}
			if after == 0 {
				r.long[status] = len(page) == r.pageSize
			}
			batch = batch[:0]
			for _, job := range page {
				after = job.ID
				switch {
				case r.done[job.ID]:
				case job.Type == engine.TypeWorkflow:
					workflows = append(workflows, job)
				default:
					batch = append(batch, job)
				}
			}
			if err := r.placeAll(batch); err != nil {
				return err
			}
			if len(page) < r.pageSize {
				break
			}
			if r.noRoom() {
				// The rest of the queue would only be counted as waiting.
				r.stats.More = true
				break
			}
		}
	}
	// Workflow steps go last, so the work they stand for is placed first.
	return r.placeAll(workflows)
}

// page reads the page of the status queue after the job after: never nil,
// so an empty first page is told from one not read yet.
func (r *round) page(status engine.Status, after int64) ([]*engine.Job, error) {
	page, err := r.Dispatcher.store.JobListDispatchable(r.ctx, engine.JobDispatchableParams{
		Status: status, AfterID: after, Limit: r.pageSize, Long: after > 0 || r.long[status]})
	if page == nil && err == nil {
		page = []*engine.Job{}
	}
	return page, err
}

// noteOverloads records the ONLINE nodes their own machine holds back, for
// the round's summary.
func (r *round) noteOverloads() {
	for _, n := range r.nodes {
		if n.State != engine.NodeOnline {
			continue
		}
		if o := n.Overloaded(); o.Kind != "" {
			r.stats.Overloaded = append(r.stats.Overloaded, NodeOverload{Node: n.Name, Kind: o.Kind, Reason: o.Reason})
		}
	}
}

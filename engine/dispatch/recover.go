package dispatch

import (
	"time"

	"github.com/jobctl/jobctl/engine"
)

// dispatching selects the jobs marked as handed to a node whose start has
// not been recorded. A round offers jobs as it read them and marks none;
// such jobs come from a dispatcher of an earlier jobctl release that died
// mid-offer, or from a hand-made DISPATCHING row.
var dispatching = []engine.Status{engine.StatusDispatching}

// reclaimStaleDispatches puts back jobs left DISPATCHING. No offer of this
// dispatcher is in flight between rounds, and the version bump fences a late
// acceptance by the node, so none of them can run twice.
func (r *round) reclaimStaleDispatches() error {
	stale, err := r.Dispatcher.store.JobList(r.ctx, engine.JobListParams{Statuses: dispatching})
	if err != nil {
		return err
	}
	if len(stale) == 0 {
		return nil
	}
	us := make([]engine.JobUpdate, len(stale))
	for i, job := range stale {
		us[i] = engine.ReclaimUpdate(job)
	}
	results, err := r.Dispatcher.store.JobUpdateMany(r.ctx, us)
	if err != nil {
		return err
	}
	for _, res := range results {
		if res.Err == nil {
			r.stats.Recovered++
		}
	}
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
			if now, err = r.Dispatcher.store.Now(r.ctx); err != nil {
				return err
			}
		}
		if now.Sub(n.LastSeen) < r.staleAfter {
			continue
		}
		jobs, err := r.Dispatcher.store.JobList(r.ctx, engine.JobListParams{Node: n.Name, Statuses: engine.RecoverableStatuses})
		if err != nil {
			return err
		}
		us := make([]engine.JobUpdate, len(jobs))
		for i, job := range jobs {
			us[i] = engine.RecoverUpdate(job, "node "+n.Name+" went offline")
		}
		results, err := r.Dispatcher.store.JobUpdateMany(r.ctx, us)
		if err != nil {
			return err
		}
		for i, res := range results {
			if res.Err == nil {
				r.log.Warn("recovered job of offline node", "job", us[i].ID, "from", n.Name, "status", us[i].To)
				r.stats.Recovered++
			}
		}
		n.Load, n.Running = 0, 0
	}
	return nil
}

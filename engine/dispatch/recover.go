package dispatch

import (
	"errors"
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

// recoverSilentNodes restarts the load-holding jobs of nodes that have
// surely stopped their runs: silent on the database clock for longer than
// their node lease and the margin (engine.Node.GoneAfter), whatever their
// state. A node stops its own runs once it could not record its liveness
// for its node lease, so none of these jobs still runs, and fencing rejects
// any late result. Heartbeats marking a node OFFLINE count for placement
// only: a node they cannot reach may still reach the database and run its
// jobs.
//
// A term that began less than a node's lease ago recovers none of that
// node's jobs: after an outage of the database or of every dispatcher,
// all nodes look silent until their next touch, and a new holder gives each
// one node lease to make it. A round without a lease term recovers nothing.
func (r *round) recoverSilentNodes() error {
	if !r.term.Held() {
		return nil
	}
	var now time.Time
	for _, n := range r.nodes {
		// A node's running count leaves out the jobs that wait for their
		// children (they hold no load), so a node with none running may
		// still have some to recover. It is looked at once per silence:
		// a silent node takes on no job, and speaking ends its silence.
		if n.Running > 0 {
			delete(r.quiet, n.Name)
		} else if seen, ok := r.quiet[n.Name]; ok && seen.Equal(n.LastSeen) {
			continue
		}
		if now.IsZero() {
			var err error
			if now, err = r.Dispatcher.store.Now(r.ctx); err != nil {
				return err
			}
		}
		if !silentPastLease(n, r.term, now) {
			continue
		}
		if silent, err := r.stillSilent(n.Name); err != nil || !silent {
			if err != nil {
				return err
			}
			continue
		}
		jobs, err := r.Dispatcher.store.JobList(r.ctx, engine.JobListParams{Node: n.Name, Statuses: engine.RecoverableStatuses})
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			r.quiet[n.Name] = n.LastSeen
			continue
		}
		silent := now.Sub(n.LastSeen).Round(time.Millisecond)
		us := make([]engine.JobUpdate, len(jobs))
		for i, job := range jobs {
			us[i] = engine.RecoverUpdate(job, "node "+n.Name+" was silent for "+silent.String()+", past its node lease")
		}
		results, err := r.Dispatcher.store.JobUpdateMany(r.ctx, us)
		if err != nil {
			return err
		}
		for i, res := range results {
			if res.Err == nil {
				r.log.Warn("recovered job of silent node", "job", us[i].ID, "from", n.Name, "status", us[i].To,
					"silent", silent, "node_lease", n.LeaseOf())
				r.stats.Recovered++
				if err := engine.CancelChildrenOfRestart(r.ctx, r.Dispatcher.store, jobs[i], us[i]); err != nil {
					r.log.Warn("cannot cancel the children of a recovered job", "job", us[i].ID, "err", err)
				}
			}
		}
		n.Load, n.Running = 0, 0
	}
	return nil
}

// stillSilent judges a node again on its row read after a fresh now: the
// round's rows may be older than its now (read before this process
// stalled), and the node may have spoken since. What follows is safe
// however late it lands: a job whose version is still the one read after
// this judgment has had no run since the node stopped its own.
func (r *round) stillSilent(name string) (bool, error) {
	now, err := r.Dispatcher.store.Now(r.ctx)
	if err != nil {
		return false, err
	}
	n, err := r.Dispatcher.store.NodeGet(r.ctx, name)
	if errors.Is(err, engine.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return silentPastLease(n, r.term, now), nil
}

// silentPastLease reports whether node n has surely stopped its runs at
// the database's now, as a holder of term may judge it: silent past its
// lease and margin, and the term itself older than n's lease.
func silentPastLease(n *engine.Node, term engine.LeaseTerm, now time.Time) bool {
	return now.Sub(n.LastSeen) > n.GoneAfter() && now.Sub(term.AcquiredAt) > n.LeaseOf()
}

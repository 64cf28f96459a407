package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// HousekeepingInterval is how often the lease holder runs its
// housekeeping: often enough that a rollback job follows its job's final
// failure, and a silent node's jobs its lease, within about a second.
const HousekeepingInterval = time.Second

// RepairEvery and RepairWindow pace the repair of children: every
// RepairEvery passes of housekeeping, one window of RepairWindow job ids is
// looked at (engine.RepairChildren), the next window the next time, from
// the first job again past the newest. What the repair looks for is left
// only by an operation cut short, so it may take its time: a pass costs a
// bounded read of the jobs table, never the whole of it.
const (
	RepairEvery  = 10
	RepairWindow = 2000
)

// RecoverBatch is how many jobs of one silent node a pass of housekeeping
// puts back at most; the next pass takes up the rest.
const RecoverBatch = 1000

// Housekeeper does the lease holder's work that is not placing jobs, apart
// from the dispatch rounds, so a round's cost is what it places: it
// recovers the jobs of nodes silent past their node lease, creates the rollback job of each job that failed finally
// (engine.SpawnRollbacks, once per job even across holders), and drops the
// reservations whose job no longer waits for its node; at its own pace
// it repairs children left active below a cancelled parent or a lost
// attempt (repairChildren). Each part is
// bounded and idempotent, so a pass cut short by a lost lease or a crash is
// taken up by the next, on whichever node then holds the lease. A round
// never counts on it: a lapsed reservation is ignored by the round that
// reads it, and a silent node is offered nothing.
type Housekeeper struct {
	store HousekeepingStore
	terms TermSource
	log   *slog.Logger
	// quiet are silent nodes found with no job left to recover, by the
	// last-seen time they had then (recoverSilentNodes).
	quiet map[string]time.Time
	// passes counts the passes, to pace the repair; repairFrom is the
	// first job id of the repair's next window.
	passes     int
	repairFrom int64
}

// HousekeepingStats counts what one pass did.
type HousekeepingStats struct {
	Recovered  int // jobs of silent nodes put back
	Rollbacks  int // rollback jobs created
	Unreserved int // lapsed reservations dropped
	Repaired   int // children left active by an operation cut short, cancelled
}

// Changed reports whether the pass changed the queues or the nodes' loads,
// so a dispatch round may find new work.
func (s HousekeepingStats) Changed() bool {
	return s.Recovered+s.Rollbacks+s.Unreserved+s.Repaired > 0
}

// NewHousekeeper returns the housekeeping of the holder of the terms
// terms tells; with nil terms it recovers no silent node's jobs (a
// simulation).
func NewHousekeeper(store HousekeepingStore, terms TermSource, log *slog.Logger) *Housekeeper {
	return &Housekeeper{store: store, terms: terms, log: log, quiet: map[string]time.Time{}}
}

// Step runs one pass of every part; it is for the lease holder only, and
// the caller checks the lease before it. A part that fails is logged and
// the others go on.
func (h *Housekeeper) Step(ctx context.Context) (HousekeepingStats, error) {
	var stats HousekeepingStats
	var errs []error
	var err error
	if stats.Recovered, err = h.recoverSilentNodes(ctx); err != nil {
		errs = append(errs, err)
	}
	if stats.Repaired, err = h.repairChildren(ctx); err != nil {
		errs = append(errs, err)
	}
	rollbacks, err := engine.SpawnRollbacks(ctx, h.store)
	for _, job := range rollbacks {
		h.log.Info("rollback job created", "job", job.ID, "rollback_of", *job.RollbackOf, "key", job.Key)
	}
	stats.Rollbacks = len(rollbacks)
	if err != nil {
		// One spec that cannot become a job must not stop the others: its
		// key stays held, and explain says why.
		errs = append(errs, err)
	}
	if stats.Unreserved, err = h.dropLapsedReservations(ctx); err != nil {
		errs = append(errs, err)
	}
	return stats, errors.Join(errs...)
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
// one node lease to make it. Without a lease term it recovers nothing.
func (h *Housekeeper) recoverSilentNodes(ctx context.Context) (int, error) {
	if h.terms == nil {
		return 0, nil
	}
	term := h.terms.Term()
	if !term.Held() {
		return 0, nil
	}
	nodes, err := h.store.NodeList(ctx)
	if err != nil {
		return 0, err
	}
	recovered := 0
	var now time.Time
	for _, n := range nodes {
		// A node's running count leaves out the jobs that wait for their
		// children (they hold no load), so a node with none running may
		// still have some to recover. It is looked at once per silence:
		// a silent node takes on no job, and speaking ends its silence.
		if n.Running > 0 {
			delete(h.quiet, n.Name)
		} else if seen, ok := h.quiet[n.Name]; ok && seen.Equal(n.LastSeen) {
			continue
		}
		if now.IsZero() {
			if now, err = h.store.Now(ctx); err != nil {
				return recovered, err
			}
		}
		if !silentPastLease(n, term, now) {
			continue
		}
		if silent, err := h.stillSilent(ctx, n.Name, term); err != nil || !silent {
			if err != nil {
				return recovered, err
			}
			continue
		}
		jobs, err := h.store.JobList(ctx, engine.JobListParams{Node: n.Name, Statuses: engine.RecoverableStatuses, Limit: RecoverBatch})
		if err != nil {
			return recovered, err
		}
		if len(jobs) == 0 {
			h.quiet[n.Name] = n.LastSeen
			continue
		}
		silent := now.Sub(n.LastSeen).Round(time.Millisecond)
		results, err := engine.RecoverJobs(ctx, h.store, jobs, "node "+n.Name+" was silent for "+silent.String()+", past its node lease",
			engine.Actor{}, engine.VerbEvent{})
		if results == nil {
			return recovered, err
		}
		if err != nil {
			h.log.Warn("cannot cancel the children of all recovered jobs", "from", n.Name, "err", err)
		}
		for i, res := range results {
			if res.Err != nil {
				continue
			}
			h.log.Warn("recovered job of silent node", "job", jobs[i].ID, "from", n.Name, "status", res.Job.Status,
				"silent", silent, "node_lease", n.LeaseOf())
			recovered++
		}
	}
	return recovered, nil
}

// repairChildren runs, every RepairEvery passes, engine.RepairChildren
// over the next window of job ids. A simulation (no terms) has no crashes
// to repair after and skips it.
func (h *Housekeeper) repairChildren(ctx context.Context) (int, error) {
	h.passes++
	if h.terms == nil || h.passes%RepairEvery != 1 {
		return 0, nil
	}
	from := max(h.repairFrom, 1)
	to := from + RepairWindow - 1
	repaired, err := engine.RepairChildren(ctx, h.store, engine.RepairChildrenParams{MinID: from, MaxID: to})
	if repaired > 0 {
		h.log.Warn("cancelled children left active by an operation cut short", "jobs", repaired, "ids_from", from, "ids_to", to)
	}
	if err != nil {
		return repaired, err
	}
	newest, err := h.store.JobList(ctx, engine.JobListParams{Limit: 1, Brief: true})
	if err != nil {
		return repaired, err
	}
	h.repairFrom = to + 1
	if len(newest) == 0 || to >= newest[0].ID {
		h.repairFrom = 1
	}
	return repaired, nil
}

// stillSilent judges a node again on its row read after a fresh now: the
// node list may be older than its now (read before this process stalled),
// and the node may have spoken since. What follows is safe however late it
// lands: a job whose version is still the one read after this judgment has
// had no run since the node stopped its own.
func (h *Housekeeper) stillSilent(ctx context.Context, name string, term engine.LeaseTerm) (bool, error) {
	now, err := h.store.Now(ctx)
	if err != nil {
		return false, err
	}
	n, err := h.store.NodeGet(ctx, name)
	if errors.Is(err, engine.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return silentPastLease(n, term, now), nil
}

// silentPastLease reports whether node n has surely stopped its runs at
// the database's now, as a holder of term may judge it: silent past its
// lease and margin, and the term itself older than n's lease.
func silentPastLease(n *engine.Node, term engine.LeaseTerm, now time.Time) bool {
	return now.Sub(n.LastSeen) > n.GoneAfter() && now.Sub(term.AcquiredAt) > n.LeaseOf()
}

// dropLapsedReservations deletes the reservations whose job no longer
// waits for its node (placed, ended, paused, delayed or blocked by its key)
// or whose node is gone (cluster.liveReservations judges them).
func (h *Housekeeper) dropLapsedReservations(ctx context.Context) (int, error) {
	c, _, stale, err := loadCluster(ctx, h.store)
	if err != nil || c == nil {
		return 0, err
	}
	for _, id := range stale {
		if err := h.store.ReservationDelete(ctx, id); err != nil {
			return 0, err
		}
	}
	return len(stale), nil
}

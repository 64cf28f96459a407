package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// JobInsertMany inserts every job in one transaction: all or none.
func (s *Store) JobInsertMany(ctx context.Context, ps []engine.JobInsertParams) ([]int64, error) {
	var ids []int64
	err := s.Tx(ctx, func(tx engine.TxStore) error {
		var err error
		ids, err = tx.JobInsertMany(ctx, ps)
		return err
	})
	return ids, err
}

// JobInsertMany validates every job and checks every parent, then inserts
// them all. An error leaves the jobs inserted before it to the
// transaction's rollback: the Store's own JobInsertMany runs it in one.
func (tx *txStore) JobInsertMany(ctx context.Context, ps []engine.JobInsertParams) ([]int64, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	for i, p := range ps {
		if err := engine.ValidateJobInsert(p); err != nil {
			return nil, atIndex(err, i)
		}
		if p.KeyPosition != nil || p.RollbackOf != nil {
			return nil, atIndex(engine.ErrInsertManyPlace, i)
		}
	}
	for _, p := range ps {
		if p.ParentID != nil && tx.s.jobs.byID[*p.ParentID] == nil {
			return nil, fmt.Errorf("insert jobs: parent %w", jobNotFound(*p.ParentID))
		}
	}
	ids := make([]int64, len(ps))
	for i, p := range ps {
		j, err := tx.JobInsert(ctx, p)
		if err != nil {
			return nil, atIndex(err, i)
		}
		ids[i] = j.ID
	}
	return ids, nil
}

// atIndex names the element of a batch an *InvalidError is about.
func atIndex(err error, i int) error {
	var inv *engine.InvalidError
	if errors.As(err, &inv) {
		return &engine.InvalidError{What: fmt.Sprintf("%s at index %d", inv.What, i), Problems: inv.Problems}
	}
	return fmt.Errorf("job at index %d: %w", i, err)
}

// JobCountByStatus counts the jobs matching p per status, Limit ignored.
func (s *Store) JobCountByStatus(_ context.Context, p engine.JobListParams) (map[engine.Status]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.Limit, p.Sort = 0, engine.JobSort{}
	out := map[engine.Status]int{}
	if len(p.Statuses) == 0 && len(p.Types) == 0 && p.Node == "" && p.Key == "" && p.ParentID == nil && len(p.ParentIDs) == 0 && p.Creator == "" &&
		p.CreatedAfter == nil && p.CreatedBefore == nil && p.MinID == 0 && p.MaxID == 0 && !p.DoubleFault && !p.Roots &&
		p.PriorityMin == 0 && p.PriorityMax == 0 && !p.OOMKilled {
		// The common case, every job: the status index has the counts.
		for st, set := range s.jobs.byStatus {
			out[st] = set.Len()
		}
		return out, nil
	}
	for _, j := range s.jobs.list(p) {
		out[j.Status]++
	}
	return out, nil
}

// JobPurge removes the ended jobs p.Choose picks, their logs, attempts,
// events and reservations, under the lock; see engine.Store.
func (s *Store) JobPurge(_ context.Context, p engine.JobPurgeParams) (engine.JobPurgeResult, error) {
	statuses, err := engine.PurgeStatuses(p)
	if err != nil {
		return engine.JobPurgeResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.jobs
	var candidates []engine.PurgeCandidate
	for _, st := range statuses {
		set := t.byStatus[st]
		if set == nil {
			continue
		}
		set.Ascend(func(id int64) bool {
			j := t.byID[id]
			if (p.Creator == "" || j.Creator == p.Creator) &&
				(p.FinishedBefore == nil || (j.FinishedAt != nil && j.FinishedAt.Before(*p.FinishedBefore))) &&
				inIDRange(id, p.MinID, p.MaxID) && purgeAfter(j, p.After) {
				candidates = append(candidates, engine.PurgeCandidate{ID: id, ParentID: j.ParentID})
			}
			return true
		})
	}
	// Those that ended first go first, as the SQL store reads them from its
	// index of ended jobs; within a range of ids, the lowest id first.
	slices.SortFunc(candidates, func(a, b engine.PurgeCandidate) int {
		if p.MinID > 0 || p.MaxID > 0 {
			return compareID(a.ID, b.ID)
		}
		fa, fb := t.byID[a.ID].FinishedAt, t.byID[b.ID].FinishedAt
		switch {
		case fa == nil && fb != nil:
			return 1
		case fa != nil && fb == nil:
			return -1
		case fa != nil && !fa.Equal(*fb):
			return fa.Compare(*fb)
		}
		return compareID(a.ID, b.ID)
	})
	// As in the SQL store: with a limit, the window of the first Limit
	// candidates is weighed alone, and all of them only when it would
	// remove nothing.
	var res engine.JobPurgeResult
	window := candidates
	if p.Limit > 0 && len(window) >= p.Limit {
		window = window[:p.Limit]
		if last := t.byID[window[len(window)-1].ID]; last.FinishedAt != nil && p.MinID == 0 && p.MaxID == 0 {
			res.Next = &engine.PurgePosition{EndedAt: *last.FinishedAt, ID: last.ID}
		}
	}
	doomed := p.Choose(window, t.purgePinned(window), p.Limit)
	if len(doomed) == 0 && len(window) < len(candidates) {
		doomed = p.Choose(candidates, t.purgePinned(candidates), p.Limit)
	}
	res.Removed = len(doomed)
	if p.DryRun {
		return res, nil
	}
	t.removeMany(doomed)
	for _, id := range doomed {
		delete(s.logs, id)
		delete(s.attempts, id)
		s.reserved.drop(id)
		s.events.dropJob(id)
	}
	return res, nil
}

// purgeAfter reports whether j ended after the place at (nil: anywhere).
func purgeAfter(j *engine.Job, at *engine.PurgePosition) bool {
	if at == nil {
		return true
	}
	if j.FinishedAt == nil {
		return false
	}
	return j.FinishedAt.After(at.EndedAt) || (j.FinishedAt.Equal(at.EndedAt) && j.ID > at.ID)
}

// purgePinned lists the candidates with a child that is no candidate.
func (t *jobTable) purgePinned(candidates []engine.PurgeCandidate) []int64 {
	isCandidate := make(map[int64]bool, len(candidates))
	for _, c := range candidates {
		isCandidate[c.ID] = true
	}
	var pinned []int64
	for _, c := range candidates {
		if children := t.byParent[c.ID]; children != nil {
			children.Ascend(func(child int64) bool {
				if !isCandidate[child] {
					pinned = append(pinned, c.ID)
					return false
				}
				return true
			})
		}
	}
	return pinned
}

// NodeRemove deletes the node's row, while it is still as the caller read
// it, and the reservations kept on it; see engine.Store.
func (s *Store) NodeRemove(ctx context.Context, p engine.NodeRemoveParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.NodeRemove(ctx, p)
}

// NodeRemove deletes the node's row, while it is still as the caller read
// it, and the reservations kept on it; see Store.NodeRemove.
func (tx *txStore) NodeRemove(ctx context.Context, p engine.NodeRemoveParams) error {
	if err := tx.check(); err != nil {
		return err
	}
	s := tx.s
	n := s.nodes[p.Name]
	if n == nil {
		return nodeNotFound(p.Name)
	}
	if !n.Process.Same(p.Process) || n.LastSeen.After(p.LastSeen) {
		return fmt.Errorf("remove node %s: its row changed since it was read: %w", p.Name, engine.ErrConflict)
	}
	delete(s.nodes, p.Name)
	tx.onUndo(func() { s.nodes[p.Name] = n })
	if jobID, ok := s.reserved.byNode[p.Name]; ok {
		return tx.ReservationDelete(ctx, jobID)
	}
	return nil
}

package engine

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"
)

// DefaultPruneBatch is how many jobs a prune removes per transaction: few
// enough that no transaction keeps the store busy for long, so dispatch
// goes on beside it.
const DefaultPruneBatch = 1000

// PruneParams select the ended jobs a prune removes.
type PruneParams struct {
	OlderThan time.Duration // jobs that ended longer ago than this, on the database clock; > 0
	Statuses  []Status      // subset of TerminalStatuses; empty: every terminal status
	Batch     int           // jobs per transaction; 0: DefaultPruneBatch
	DryRun    bool          // count what would go, remove nothing
	// Between runs before every batch but the first and may wait (a pause
	// that leaves the store to others); false stops the prune early with
	// what it removed so far. nil goes straight on.
	Between func(ctx context.Context) bool
}

// PruneResult is what a prune did.
type PruneResult struct {
	Removed int // jobs removed (or, on a dry run, that would be)
	// EventsRemoved counts the events naming no job removed with them
	// (or that would be); a job's own events go with the job, uncounted.
	EventsRemoved int
	Cutoff        time.Time // jobs that ended before this went (database clock)
	Stopped       bool      // Between stopped it before the last batch
}

// PruneStore is what Prune needs of a store.
type PruneStore interface {
	Now(ctx context.Context) (time.Time, error)
	JobPurge(ctx context.Context, p JobPurgeParams) (JobPurgeResult, error)
	EventPurge(ctx context.Context, p EventPurgeParams) (int, error)
}

// Prune removes the ended jobs that finished more than p.OlderThan ago, with
// their logs and reservations, in batches of p.Batch jobs, each its own
// transaction. A parent goes only with or after its children (see
// PurgeSelect). The cutoff is read from the database clock once, so jobs
// ending while the prune runs do not keep it going. Each batch starts
// where the one before stopped (JobPurgeParams.After), so the prune costs
// the same per job however many it removes; a last sweep from the start
// then takes what a batch had to leave (a parent whose children went in a
// later batch). A job's events and attempts go with it; a prune of every
// ended status (no Statuses) then removes the events naming no job (nodes,
// limits, schedules, the lease) recorded before the cutoff, in batches
// too. A dry run counts in one read each and removes nothing.
func Prune(ctx context.Context, s PruneStore, p PruneParams) (PruneResult, error) {
	if p.OlderThan <= 0 {
		return PruneResult{}, &InvalidError{What: "prune", Problems: []string{fmt.Sprintf("older than %s: must be positive", p.OlderThan)}}
	}
	if p.Batch < 0 {
		return PruneResult{}, &InvalidError{What: "prune", Problems: []string{fmt.Sprintf("batch %d is negative", p.Batch)}}
	}
	batch := p.Batch
	if batch == 0 {
		batch = DefaultPruneBatch
	}
	if _, err := PurgeStatuses(JobPurgeParams{Statuses: p.Statuses, Choose: PurgeSelect}); err != nil {
		return PruneResult{}, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune: read the database clock: %w", err)
	}
	res := PruneResult{Cutoff: now.Add(-p.OlderThan)}
	purge := JobPurgeParams{Statuses: p.Statuses, FinishedBefore: &res.Cutoff, Limit: batch, Choose: PurgeSelect}
	events := EventPurgeParams{Before: res.Cutoff, Limit: batch}
	pruneEvents := len(p.Statuses) == 0
	if p.DryRun {
		purge.Limit, purge.DryRun = 0, true
		r, err := s.JobPurge(ctx, purge)
		if res.Removed = r.Removed; err != nil || !pruneEvents {
			return res, err
		}
		events.Limit, events.DryRun = 0, true
		res.EventsRemoved, err = s.EventPurge(ctx, events)
		return res, err
	}
	first := true
	between := func() bool {
		stop := !first && p.Between != nil && !p.Between(ctx)
		first = false
		return stop
	}
	for sweep, done := false, false; !done; {
		if between() {
			res.Stopped = true
			return res, nil
		}
		r, err := s.JobPurge(ctx, purge)
		res.Removed += r.Removed
		if err != nil {
			return res, err
		}
		switch {
		case r.Next != nil && !sweep:
			purge.After = r.Next
		case !sweep:
			// Past the last candidate: sweep from the start for what the
			// batches left behind.
			sweep, purge.After = true, nil
		case r.Removed == 0:
			// A batch removes at least one job while any can go (it
			// weighs every candidate when its window frees none).
			done = true
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
	for pruneEvents {
		if between() {
			res.Stopped = true
			return res, nil
		}
		n, err := s.EventPurge(ctx, events)
		res.EventsRemoved += n
		if err != nil {
			return res, err
		}
		if n < batch {
			break
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// PurgeStatuses validates a purge and returns the statuses it removes: the
// ones it names, or every terminal status. A job that has not ended is
// never removed, so naming any other status is an *InvalidError, as is a
// negative limit or id bound.
func PurgeStatuses(p JobPurgeParams) ([]Status, error) {
	var problems []string
	for _, st := range p.Statuses {
		if !st.Terminal() {
			problems = append(problems, fmt.Sprintf("status %q has not ended; only %v jobs are purged", st, TerminalStatuses))
		}
	}
	if p.Limit < 0 {
		problems = append(problems, fmt.Sprintf("limit %d is negative", p.Limit))
	}
	if p.MinID < 0 || p.MaxID < 0 {
		problems = append(problems, fmt.Sprintf("id range %d to %d: ids are not negative", p.MinID, p.MaxID))
	}
	if p.Choose == nil {
		problems = append(problems, "no rule to choose which candidates go (see PurgeJobs)")
	}
	if p.After != nil && (p.MinID != 0 || p.MaxID != 0) {
		// A range is read in id order, not in the order of the ends After
		// is a place in.
		problems = append(problems, "a range of ids and a place to continue after do not go together")
	}
	if len(problems) > 0 {
		return nil, &InvalidError{What: "purge", Problems: problems}
	}
	if len(p.Statuses) == 0 {
		return slices.Clone(TerminalStatuses), nil
	}
	return slices.Compact(slices.Sorted(slices.Values(p.Statuses))), nil
}

// PurgeCandidate is a job that matches a purge and has ended.
type PurgeCandidate struct {
	ID       int64
	ParentID *int64
}

// JobPurger removes ended jobs (Store.JobPurge).
type JobPurger interface {
	JobPurge(ctx context.Context, p JobPurgeParams) (JobPurgeResult, error)
}

// PurgeJobs removes the ended jobs matching p, with their logs, attempts,
// events and reservations (Store.JobPurge), by the cluster's rule
// (PurgeSelect): a job stays while any descendant stays, so no job is left
// naming a parent that is gone, and with a limit a parent goes only
// together with all its descendants, which may leave fewer than Limit
// removed.
func PurgeJobs(ctx context.Context, s JobPurger, p JobPurgeParams) (JobPurgeResult, error) {
	p.Choose = PurgeSelect
	return s.JobPurge(ctx, p)
}

// PurgeSelect chooses which candidates a purge removes. candidates are in the order they go, those that ended first
// first (see Store.JobPurge); pinned are the candidates with a child that
// is no candidate (it has not ended, or does not match), which must stay.
// A job stays while any descendant stays, so no job is ever left naming a
// parent that is gone. With a limit (> 0) jobs go in the candidates'
// order, each together with all its descendants: a job whose family does
// not fit in what is left of the limit is passed over, and its descendants
// are considered on their own. The result is in ascending id order.
func PurgeSelect(candidates []PurgeCandidate, pinned []int64, limit int) []int64 {
	// The passes over families walk the candidates by id: a child's id is
	// above its parent's (the parent existed when it was inserted), so
	// walking down the ids visits children before parents.
	byID := make([]int, len(candidates))
	for i := range byID {
		byID[i] = i
	}
	slices.SortFunc(byID, func(a, b int) int { return cmp.Compare(candidates[a].ID, candidates[b].ID) })
	at := make(map[int64]int, len(candidates))
	for i, c := range candidates {
		at[c.ID] = i
	}
	parentAt := func(i int) (int, bool) {
		if p := candidates[i].ParentID; p != nil {
			pi, ok := at[*p]
			return pi, ok
		}
		return 0, false
	}
	staying := make([]bool, len(candidates))
	for _, id := range pinned {
		if i, ok := at[id]; ok {
			staying[i] = true
		}
	}
	for _, i := range slices.Backward(byID) {
		if pi, ok := parentAt(i); ok && staying[i] {
			staying[pi] = true
		}
	}
	chosen := make([]bool, len(candidates))
	if limit <= 0 {
		for i := range candidates {
			chosen[i] = !staying[i]
		}
	} else {
		// Every child of a job that goes is a candidate that goes too, so a
		// family is the job and its descendants among the candidates.
		children := make(map[int][]int)
		family := make([]int, len(candidates))
		var heads positions
		for _, i := range slices.Backward(byID) {
			if staying[i] {
				continue
			}
			family[i]++
			if pi, ok := parentAt(i); ok && !staying[pi] {
				children[pi] = append(children[pi], i)
				family[pi] += family[i]
			} else {
				heads = append(heads, i)
			}
		}
		// A family goes at its head's place in the order; one that does not
		// fit leaves its children to be weighed as heads of their own.
		heap.Init(&heads)
		for left := limit; left > 0 && heads.Len() > 0; {
			i := heap.Pop(&heads).(int)
			if family[i] > left {
				for _, c := range children[i] {
					heap.Push(&heads, c)
				}
				continue
			}
			for todo := []int{i}; len(todo) > 0; {
				j := todo[len(todo)-1]
				todo = append(todo[:len(todo)-1], children[j]...)
				chosen[j] = true
			}
			left -= family[i]
		}
	}
	var out []int64
	for _, i := range byID {
		if chosen[i] {
			out = append(out, candidates[i].ID)
		}
	}
	return out
}

// positions is a min-heap of places in the candidates' order.
type positions []int

func (h positions) Len() int           { return len(h) }
func (h positions) Less(i, j int) bool { return h[i] < h[j] }
func (h positions) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *positions) Push(x any)        { *h = append(*h, x.(int)) }
func (h *positions) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

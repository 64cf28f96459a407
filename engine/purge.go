package engine

import (
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

// Prune removes the ended jobs that finished more than p.OlderThan ago, with
// their logs and reservations, in batches of p.Batch jobs, each its own
// transaction. A parent goes only with or after its children (see
// PurgeSelect). The cutoff is read from the database clock once, so jobs
// ending while the prune runs do not keep it going. A job's events go with
// it; a prune of every ended status (no Statuses) then removes the events
// naming no job (nodes, limits, schedules, the lease) recorded before the
// cutoff, in batches too. A dry run counts in one read each and removes
// nothing.
func Prune(ctx context.Context, s Store, p PruneParams) (PruneResult, error) {
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
	if _, err := PurgeStatuses(JobPurgeParams{Statuses: p.Statuses}); err != nil {
		return PruneResult{}, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune: read the database clock: %w", err)
	}
	res := PruneResult{Cutoff: now.Add(-p.OlderThan)}
	purge := JobPurgeParams{Statuses: p.Statuses, FinishedBefore: &res.Cutoff, Limit: batch}
	events := EventPurgeParams{Before: res.Cutoff, Limit: batch}
	pruneEvents := len(p.Statuses) == 0
	if p.DryRun {
		purge.Limit, purge.DryRun = 0, true
		if res.Removed, err = s.JobPurge(ctx, purge); err != nil || !pruneEvents {
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
	for {
		if between() {
			res.Stopped = true
			return res, nil
		}
		n, err := s.JobPurge(ctx, purge)
		res.Removed += n
		if err != nil {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// A batch removes at least one job while any can go (PurgeSelect
		// takes every lone job that fits), so none removed means done.
		if n == 0 {
			break
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
// negative limit.
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

// PurgeSelect chooses which candidates a purge removes, the same way in
// every store. candidates are in ascending id order; pinned are the
// candidates with a child that is no candidate (it has not ended, or does
// not match), which must stay. A job stays while any descendant stays, so
// no job is ever left naming a parent that is gone. With a limit (> 0) the
// oldest jobs go first, each together with all its descendants: a job
// whose family does not fit in what is left of the limit is passed over,
// and its descendants are considered on their own. The result is in
// ascending id order.
func PurgeSelect(candidates []PurgeCandidate, pinned []int64, limit int) []int64 {
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
	// A child's id is above its parent's (the parent existed when it was
	// inserted), so walking down the ids visits children before parents.
	for i := len(candidates) - 1; i >= 0; i-- {
		if pi, ok := parentAt(i); ok && staying[i] {
			staying[pi] = true
		}
	}
	if limit <= 0 {
		var out []int64
		for i, c := range candidates {
			if !staying[i] {
				out = append(out, c.ID)
			}
		}
		return out
	}

	// Every child of a job that goes is a candidate that goes too, so a
	// family is the job and its descendants among the candidates.
	children := make(map[int][]int)
	family := make([]int, len(candidates))
	for i := len(candidates) - 1; i >= 0; i-- {
		if staying[i] {
			continue
		}
		family[i]++
		if pi, ok := parentAt(i); ok {
			children[pi] = append(children[pi], i)
			family[pi] += family[i]
		}
	}
	chosen := make([]bool, len(candidates))
	choose := func(i int) {
		for todo := []int{i}; len(todo) > 0; {
			j := todo[len(todo)-1]
			todo = append(todo[:len(todo)-1], children[j]...)
			chosen[j] = true
		}
	}
	left := limit
	for i := 0; i < len(candidates) && left > 0; i++ {
		if staying[i] || chosen[i] || family[i] > left {
			continue
		}
		choose(i)
		left -= family[i]
	}
	var out []int64
	for i, c := range candidates {
		if chosen[i] {
			out = append(out, c.ID)
		}
	}
	return out
}

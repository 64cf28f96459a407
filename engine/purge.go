package engine

import (
	"fmt"
	"slices"
)

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

package engine

import (
	"slices"
	"testing"
)

func TestPurgeSelect(t *testing.T) {
	c := func(id int64, parent ...int64) PurgeCandidate {
		pc := PurgeCandidate{ID: id}
		if len(parent) > 0 {
			pc.ParentID = &parent[0]
		}
		return pc
	}
	// 1 ← 2 ← 3 (a chain), 4 alone, 5 ← 6 where 5 has a child that stays,
	// 7 whose parent 100 is no candidate.
	family := []PurgeCandidate{c(1), c(2, 1), c(3, 2), c(4), c(5), c(6, 5), c(7, 100)}
	for _, tt := range []struct {
		name   string
		pinned []int64
		limit  int
		want   []int64
	}{
		{"no limit", []int64{5}, 0, []int64{1, 2, 3, 4, 6, 7}},
		{"a pinned grandchild keeps its ancestors", []int64{3}, 0, []int64{4, 5, 6, 7}},
		{"limit takes whole families, oldest first", []int64{5}, 4, []int64{1, 2, 3, 4}},
		{"a family too large is passed over", []int64{5}, 2, []int64{2, 3}},
		{"limit 1 takes the oldest leaf", []int64{5}, 1, []int64{3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := PurgeSelect(family, tt.pinned, tt.limit); !slices.Equal(got, tt.want) {
				t.Errorf("PurgeSelect(limit %d, pinned %v) = %v, want %v", tt.limit, tt.pinned, got, tt.want)
			}
		})
	}
}

// With a limit, families go in the order of the candidates (those that
// ended first first), each at the place of its head, the job the others
// descend from.
func TestPurgeSelectInEndOrder(t *testing.T) {
	one, two := int64(1), int64(2)
	// 2 is 1's child, 3 is 2's; they ended 3, 4, 2, 1.
	ended := []PurgeCandidate{{ID: 3, ParentID: &two}, {ID: 4}, {ID: 2, ParentID: &one}, {ID: 1}}
	for _, tt := range []struct {
		limit int
		want  []int64
	}{
		{1, []int64{4}},          // 3 ended first, but its family's head, 1, ended last
		{2, []int64{3, 4}},       // then 1's family does not fit, nor 2's: 3 alone does
		{3, []int64{2, 3, 4}},    // 4, then 2 and 3, the family of 2
		{4, []int64{1, 2, 3, 4}}, // all
	} {
		if got := PurgeSelect(ended, nil, tt.limit); !slices.Equal(got, tt.want) {
			t.Errorf("PurgeSelect(limit %d) = %v, want %v", tt.limit, got, tt.want)
		}
	}
}

// A long chain of parents is chosen without deep recursion.
func TestPurgeSelectLongChain(t *testing.T) {
	const n = 200_000
	chain := make([]PurgeCandidate, n)
	for i := range chain {
		chain[i].ID = int64(i + 1)
		if i > 0 {
			chain[i].ParentID = &chain[i-1].ID
		}
	}
	if got := PurgeSelect(chain, nil, n); len(got) != n {
		t.Errorf("chose %d of a chain of %d", len(got), n)
	}
	if got := PurgeSelect(chain, nil, 10); !slices.Equal(got, []int64{n - 9, n - 8, n - 7, n - 6, n - 5, n - 4, n - 3, n - 2, n - 1, n}) {
		t.Errorf("limit 10 of a chain chose %v, want its last ten", got)
	}
}

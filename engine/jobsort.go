package engine

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// JobSort orders a job listing (JobListParams.Sort). The store sorts every
// matching job before it applies Limit, so a sorted listing with a Limit
// holds the first Limit jobs in that order, not a sorted page of the newest.
type JobSort struct {
	// Field is the Name of one of JobSortFields; "" keeps a listing's own
	// order: by id, with Limit the newest Limit jobs, oldest first.
	Field string
	// Desc sorts descending. Jobs equal in Field go by id, in the same
	// direction, so the order is total and a page boundary is exact.
	Desc bool
}

// SortKind says how a sort field's values compare, which the SQL store
// needs to order them as Compare does.
type SortKind int

const (
	// SortNumber is a number column that is never NULL.
	SortNumber SortKind = iota
	// SortText is a text column that is never NULL, compared byte by
	// byte (not by any locale's collation).
	SortText
	// SortTime is a time column; a time not set (NULL) comes before
	// every time that is, ascending.
	SortTime
)

// JobSortField is one field a job listing can be sorted by.
type JobSortField struct {
	Name string // as JobSort.Field and `list --sort` spell it
	// Column is the column of the jobs table holding the field. The SQL
	// store builds its ORDER BY from this list alone, never from a
	// caller's text.
	Column  string
	Kind    SortKind
	Compare func(a, b *Job) int // ascending, without the tie on id
}

// JobSortFields are the fields a job listing can be sorted by: adding
// one is one line here, and every store, the conformance suite and
// `list --sort` follow.
var JobSortFields = []JobSortField{
	{"id", "id", SortNumber, func(a, b *Job) int { return cmp.Compare(a.ID, b.ID) }},
	{"created", "created_at", SortTime, func(a, b *Job) int { return compareTimes(&a.CreatedAt, &b.CreatedAt) }},
	{"status", "status", SortText, func(a, b *Job) int { return strings.Compare(string(a.Status), string(b.Status)) }},
	{"type", "type", SortText, func(a, b *Job) int { return strings.Compare(a.Type, b.Type) }},
	{"operation", "operation", SortText, func(a, b *Job) int { return strings.Compare(a.Operation, b.Operation) }},
	{"node", "node", SortText, func(a, b *Job) int { return strings.Compare(a.Node, b.Node) }},
	{"load", "job_load", SortNumber, func(a, b *Job) int { return cmp.Compare(a.Load, b.Load) }},
	{"priority", "priority", SortNumber, func(a, b *Job) int { return cmp.Compare(a.Priority, b.Priority) }},
	{"progress", "progress", SortNumber, func(a, b *Job) int { return cmp.Compare(a.Progress, b.Progress) }},
	{"key", "job_key", SortText, func(a, b *Job) int { return strings.Compare(a.Key, b.Key) }},
	{"run-after", "run_after", SortTime, func(a, b *Job) int { return compareTimes(a.RunAfter, b.RunAfter) }},
	{"started", "started_at", SortTime, func(a, b *Job) int { return compareTimes(a.StartedAt, b.StartedAt) }},
	{"finished", "finished_at", SortTime, func(a, b *Job) int { return compareTimes(a.FinishedAt, b.FinishedAt) }},
}

// JobSortFieldNamed returns the sort field of that name, or an
// *InvalidError listing the known ones.
func JobSortFieldNamed(name string) (*JobSortField, error) {
	for i := range JobSortFields {
		if JobSortFields[i].Name == name {
			return &JobSortFields[i], nil
		}
	}
	names := make([]string, len(JobSortFields))
	for i, f := range JobSortFields {
		names[i] = f.Name
	}
	return nil, &InvalidError{What: "sort", Problems: []string{
		fmt.Sprintf("no field %q: want one of %s", name, strings.Join(names, ", "))}}
}

// Compare orders two jobs as the sort lists them: by the field, then by
// id, both in the sort's direction. The zero JobSort compares by id.
func (s JobSort) Compare(a, b *Job) int {
	c := 0
	if s.Field != "" {
		if f, err := JobSortFieldNamed(s.Field); err == nil {
			c = f.Compare(a, b)
		}
	}
	if c == 0 {
		c = cmp.Compare(a.ID, b.ID)
	}
	if s.Desc {
		c = -c
	}
	return c
}

// compareTimes orders times that are not set before every time that is.
func compareTimes(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Compare(*b)
}

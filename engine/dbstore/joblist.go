package dbstore

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/jobctl/jobctl/engine"
)

// jobListShape is one way the job_list query is read; the query is
// rendered once per shape at Open, so a listing only picks its statement.
type jobListShape struct {
	Brief bool   // the brief columns only (engine.JobListParams.Brief)
	Live  bool   // live statuses only: the status term stands alone
	Order string // the ORDER BY, from engine.JobSortFields only
}

// jobListQueryName names the rendered job_list statement for a listing:
// job_list itself is the unsorted, full, any-status one.
func jobListQueryName(sort engine.JobSort, live, brief bool) string {
	name := qJobList
	if sort.Field != "" {
		name += "/" + sort.Field + "/" + direction(sort.Desc)
	}
	if live {
		name += "/live"
	}
	if brief {
		name += "/brief"
	}
	return name
}

func direction(desc bool) string {
	if desc {
		return "desc"
	}
	return "asc"
}

// renderJobLists renders the job_list template for every shape: unsorted
// (newest first; JobList returns the page oldest first) and each field of
// engine.JobSortFields in both directions, each brief or full and for any
// status or live ones only.
func renderJobLists(root *template.Template, d *dialect) (map[string]string, error) {
	type order struct {
		sort   engine.JobSort
		clause string
	}
	orders := []order{{engine.JobSort{}, "id DESC"}}
	for _, f := range engine.JobSortFields {
		for _, desc := range []bool{false, true} {
			orders = append(orders, order{engine.JobSort{Field: f.Name, Desc: desc}, orderClause(d, f, desc)})
		}
	}
	out := map[string]string{}
	for _, o := range orders {
		for _, live := range []bool{false, true} {
			for _, brief := range []bool{false, true} {
				var b strings.Builder
				shape := jobListShape{Brief: brief, Live: live, Order: o.clause}
				if err := root.ExecuteTemplate(&b, qJobList, shape); err != nil {
					return nil, fmt.Errorf("sql/queries %s (%s): %w", qJobList, d.name, err)
				}
				out[jobListQueryName(o.sort, live, brief)] = strings.TrimSpace(b.String())
			}
		}
	}
	return out, nil
}

// orderClause is the ORDER BY of a sort: the field's column, then id,
// both in the sort's direction, so the order is total. Text compares byte
// by byte on every backend, and a time not set comes first ascending
// (NULLs sort first on some backends and last on others by default).
func orderClause(d *dialect, f engine.JobSortField, desc bool) string {
	dir := strings.ToUpper(direction(desc))
	if f.Column == "id" {
		return "id " + dir
	}
	var terms []string
	switch f.Kind {
	case engine.SortText:
		terms = append(terms, f.Column+d.binaryCollation+" "+dir)
	case engine.SortTime:
		terms = append(terms, "CASE WHEN "+f.Column+" IS NULL THEN 0 ELSE 1 END "+dir, f.Column+" "+dir)
	default:
		terms = append(terms, f.Column+" "+dir)
	}
	return strings.Join(append(terms, "id "+dir), ", ")
}

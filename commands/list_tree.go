package commands

import (
	"strconv"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// listTreeHelp is the part of list's help about --tree.
const listTreeHelp = `--tree draws families: each job whose parent is not listed is a root, and
the listed descendants of each follow it, indented below it (drawn with
├─ and └─ on a terminal, two spaces a generation when piped, in the ID
column). The filters and --limit choose the jobs as ever, so a child whose
parent is filtered out is shown as a root; --sort orders the roots and the
children of each parent. -o json and -q print the same jobs, flat, in the
tree's order (a parent before its children); the objects' parent_id says
who belongs to whom. --tree cannot be combined with -w.`

// addTreeFlag adds --tree to list.
func addTreeFlag(cmd *cobra.Command, opts *ListOptions) {
	cmd.Flags().BoolVar(&opts.Tree, "tree", false, "draw each job's listed children indented below it")
}

// checkTree refuses what --tree cannot be combined with.
func checkTree(cmd *cobra.Command, opts *ListOptions) error {
	if opts.Tree && opts.Watch {
		return usageErrorf(cmd, "--tree draws a listing once; it cannot be combined with -w")
	}
	return nil
}

// treeRow is one job of a tree listing, with how to draw its place.
type treeRow struct {
	job   *engine.Job
	depth int
	// lines: the drawing before the id on a terminal ("│  └─ ").
	lines string
}

// familyTree puts jobs, in their order, into the order of their families:
// each root (a job whose parent is not among them) followed, depth first,
// by its descendants among them, children in the order they came in.
func familyTree(jobs []*engine.Job) []treeRow {
	listed := make(map[int64]bool, len(jobs))
	for _, j := range jobs {
		listed[j.ID] = true
	}
	children := map[int64][]*engine.Job{}
	var roots []*engine.Job
	for _, j := range jobs {
		if j.ParentID != nil && listed[*j.ParentID] && *j.ParentID != j.ID {
			children[*j.ParentID] = append(children[*j.ParentID], j)
		} else {
			roots = append(roots, j)
		}
	}
	rows := make([]treeRow, 0, len(jobs))
	placed := make(map[int64]bool, len(jobs))
	var walk func(j *engine.Job, depth int, indent, branch string)
	walk = func(j *engine.Job, depth int, indent, branch string) {
		placed[j.ID] = true
		rows = append(rows, treeRow{job: j, depth: depth, lines: indent + branch})
		kids := children[j.ID]
		for i, c := range kids {
			if placed[c.ID] {
				continue
			}
			next, more := indent, i < len(kids)-1
			if depth > 0 {
				if strings.HasPrefix(branch, "├") {
					next += "│  "
				} else {
					next += "   "
				}
			}
			b := "└─ "
			if more {
				b = "├─ "
			}
			walk(c, depth+1, next, b)
		}
	}
	for _, r := range roots {
		walk(r, 0, "", "")
	}
	// Jobs in a parent cycle have no root among them: each such loop is
	// shown from its oldest listed member, so no job is left out.
	for _, j := range jobs {
		if !placed[j.ID] {
			walk(j, 0, "", "")
		}
	}
	return rows
}

// printTree prints a listing as family trees.
func printTree(opts *ListOptions, jobs []*engine.Job) error {
	rows := familyTree(jobs)
	ordered := make([]*engine.Job, len(rows))
	for i, r := range rows {
		ordered[i] = r.job
	}
	if opts.Output.Quiet || opts.Output.Format == formatJSON {
		return printJobs(opts.IO, opts.Output, opts.Clock.Now(), ordered, true)
	}
	t := jobTable(opts.IO, opts.Output, opts.Clock.Now(), ordered)
	for i, r := range rows {
		id := strconv.FormatInt(r.job.ID, 10)
		if opts.IO.OutIsTerminal {
			t.rows[i][0] = r.lines + id
		} else {
			t.rows[i][0] = strings.Repeat("  ", r.depth) + id
		}
	}
	return t.render()
}

package commands

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jobctl/jobctl/engine"
)

// showChildrenMax is how many children show's table lists; the rest are
// counted, and 'jobctl list --parent ID' lists them all.
const showChildrenMax = 50

// shownChild is one child as show's -o json lists it.
type shownChild struct {
	ID     int64         `json:"id"`
	Type   string        `json:"type"`
	Status engine.Status `json:"status"`
}

// shownJob is the job show's -o json prints: the job object of 'list -o
// json' with what only show reads: every attempt, and the children, []
// for none.
type shownJob struct {
	*engine.Job
	Attempts []engine.Attempt `json:"attempts"`
	Children []shownChild     `json:"children"`
	// EndedBy is the event of the operator who cancelled or deleted the
	// job (engine.EndedBy); null when it ended otherwise, or has not.
	EndedBy *engine.Event `json:"ended_by"`
}

// jobChildren reads the children of job id, oldest first.
func jobChildren(ctx context.Context, store jobReader, id int64) ([]*engine.Job, error) {
	children, err := store.JobList(ctx, engine.JobListParams{ParentID: &id, Brief: true})
	if err != nil {
		return nil, fmt.Errorf("listing the children of job %d: %w", id, err)
	}
	slices.SortFunc(children, func(a, b *engine.Job) int { return cmp.Compare(a.ID, b.ID) })
	return children, nil
}

// withChildren is the job and its children for -o json.
func withChildren(j *engine.Job, children []*engine.Job) shownJob {
	out := shownJob{Job: j, Children: make([]shownChild, len(children))}
	for i, c := range children {
		out.Children[i] = shownChild{ID: c.ID, Type: c.Type, Status: c.Status}
	}
	return out
}

// addChildrenRow sums the children up in one row of show's table form:
// how many, and how many of them have ended.
func addChildrenRow(kv *keyValues, children []*engine.Job) {
	if len(children) == 0 {
		return
	}
	ended := 0
	for _, c := range children {
		if c.Status.Terminal() {
			ended++
		}
	}
	kv.add("children", fmt.Sprintf("%d (%d ended)", len(children), ended))
}

// renderChildren lists the children below show's table form, after a
// blank line: ID, TYPE and STATUS, at most showChildrenMax of them.
func renderChildren(ios *IOStreams, parent int64, children []*engine.Job) error {
	if len(children) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(ios.Out); err != nil {
		return err
	}
	p := newPalette(ios)
	t := newTable(ios, "CHILD", "TYPE", "STATUS")
	for _, c := range children[:min(len(children), showChildrenMax)] {
		t.addRow(strconv.FormatInt(c.ID, 10), c.Type, statusCell(p, c.Status))
	}
	if err := t.render(); err != nil {
		return err
	}
	if more := len(children) - showChildrenMax; more > 0 {
		_, err := fmt.Fprintf(ios.Out, "… and %d more: jobctl list --parent %d\n", more, parent)
		return err
	}
	return nil
}

package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/jobctl/jobctl/engine"
)

// JobsPane lists one page of the jobs of the selected node or of the whole
// cluster: status, type, node, load, age and a progress bar.
type JobsPane struct {
	styles  Styles
	keys    KeyMap
	width   int
	height  int
	focused bool

	jobs     []*engine.Job
	query    Query
	filter   string // the filter as typed
	matching int
	at       time.Time
	cursor   int
	offset   int
}

// NewJobsPane returns an empty pane.
func NewJobsPane(s Styles, k KeyMap) JobsPane { return JobsPane{styles: s, keys: k} }

// SetSize sets the space the pane may use, title and column heads included.
func (p *JobsPane) SetSize(width, height int) {
	p.width, p.height = width, height
	p.scroll()
}

// SetFocused says whether the movement keys move in this pane.
func (p *JobsPane) SetFocused(f bool) { p.focused = f }

// SetFilter records the filter as typed, for the title.
func (p *JobsPane) SetFilter(s string) { p.filter = s }

// Selected is the job under the cursor, nil when there is none.
func (p JobsPane) Selected() *engine.Job {
	if p.cursor < len(p.jobs) {
		return p.jobs[p.cursor]
	}
	return nil
}

// Update takes snapshots (the cursor stays on the same job while it is
// listed) and, when focused, the movement keys.
func (p JobsPane) Update(msg tea.Msg) (JobsPane, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		if msg.err != nil {
			break
		}
		var id int64
		if j := p.Selected(); j != nil {
			id = j.ID
		}
		p.jobs, p.query, p.matching, p.at = msg.snap.Jobs, msg.snap.Query, msg.snap.Matching, msg.snap.At
		p.cursor = min(p.cursor, max(0, len(p.jobs)-1))
		for i, j := range p.jobs {
			if j.ID == id {
				p.cursor = i
			}
		}
	case tea.KeyPressMsg:
		if !p.focused {
			break
		}
		switch {
		case key.Matches(msg, p.keys.Up):
			p.cursor = max(0, p.cursor-1)
		case key.Matches(msg, p.keys.Down):
			p.cursor = max(0, min(len(p.jobs)-1, p.cursor+1))
		}
	}
	p.scroll()
	return p, nil
}

// ResetCursor puts the cursor on the first job, for a new scope or filter.
func (p *JobsPane) ResetCursor() { p.cursor, p.offset = 0, 0 }

func (p *JobsPane) rows() int { return max(0, p.height-2) }

func (p *JobsPane) scroll() {
	rows := p.rows()
	switch {
	case p.cursor < p.offset:
		p.offset = p.cursor
	case rows > 0 && p.cursor >= p.offset+rows:
		p.offset = p.cursor - rows + 1
	}
	p.offset = max(0, min(p.offset, len(p.jobs)-rows))
}

// Column widths; type, node and the progress bar share what is left.
const (
	jobIDW     = 7
	jobStatusW = 12 // INSTANTIATED
	jobLoadW   = 5
	jobPriW    = 3 // 100
	jobAgeW    = 4
	jobPctW    = 4 // 100%
)

func (p JobsPane) widths() []int {
	cluster := p.query.Node == ""
	cols := 9
	if cluster {
		cols++
	}
	fixed := 1 + jobIDW + jobStatusW + jobLoadW + jobPriW + jobAgeW + jobPctW + cols - 1
	rest := max(0, p.width-fixed)
	typeW, nodeW := 4, 0
	for _, j := range p.jobs {
		typeW = max(typeW, len(j.Type))
		if cluster {
			nodeW = max(nodeW, len(j.Node))
		}
	}
	if cluster {
		nodeW = max(4, min(nodeW, 16, rest/3))
	}
	typeW = max(4, min(typeW, 16, (rest-nodeW)/2))
	barW := max(0, rest-typeW-nodeW)
	w := []int{1, jobIDW, jobStatusW, typeW}
	if cluster {
		w = append(w, nodeW)
	}
	return append(w, jobLoadW, jobPriW, jobAgeW, barW, jobPctW)
}

// View renders the title, the column heads and the visible rows.
func (p JobsPane) View() string {
	style := p.styles.PaneTitle
	if p.focused {
		style = p.styles.PaneFocused
	}
	where := "all nodes"
	if p.query.Node != "" {
		where = "node " + p.query.Node
	}
	title := "Jobs on " + where
	if p.filter != "" {
		title += " · filter: " + p.filter
	}
	switch {
	case p.matching < 0:
		title += fmt.Sprintf(" · %d shown, on nodes first", len(p.jobs))
	case p.matching > len(p.jobs):
		title += fmt.Sprintf(" · %d of %d, on nodes first", len(p.jobs), p.matching)
	default:
		title += fmt.Sprintf(" · %d", len(p.jobs))
	}
	lines := []string{fit(style.Render(title), p.width)}
	w := p.widths()
	head := []string{"", "ID", "STATUS", "TYPE"}
	if p.query.Node == "" {
		head = append(head, "NODE")
	}
	head = append(head, "LOAD", "PRI", "AGE", "PROGRESS", "")
	lines = append(lines, p.styles.ColumnHead.Render(row(head, w)))
	if len(p.jobs) == 0 {
		lines = append(lines, p.styles.Dim.Render("  no jobs"))
	}
	for i := p.offset; i < len(p.jobs) && i < p.offset+p.rows(); i++ {
		lines = append(lines, p.rowView(i, w))
	}
	return joinLines(lines, p.height, p.width)
}

func (p JobsPane) rowView(i int, w []int) string {
	j := p.jobs[i]
	cells := []string{marker(i == p.cursor, p.focused), strconv.FormatInt(j.ID, 10), p.styles.status(j.Status), j.Type}
	if p.query.Node == "" {
		cells = append(cells, j.Node)
	}
	barW := w[len(w)-2]
	cells = append(cells,
		fitRight(engine.FormatNumber(j.Load), jobLoadW),
		fitRight(strconv.Itoa(j.Priority), jobPriW),
		fitRight(age(p.at.Sub(j.CreatedAt)), jobAgeW),
		bar(float64(j.Progress)/100, barW, p.styles.Progress, p.styles.BarEmpty),
		fitRight(strconv.Itoa(j.Progress)+"%", jobPctW),
	)
	return selectRow(p.styles, row(cells, w), i == p.cursor && p.focused)
}

// describeJob names a job in prompts: "job 42 (sleep, RUNNING on node-a)".
func describeJob(j *engine.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %d (%s, %s", j.ID, j.Type, j.Status)
	if j.Node != "" {
		b.WriteString(" on " + j.Node)
	}
	b.WriteString(")")
	return b.String()
}

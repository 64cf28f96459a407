package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
)

// JobsPane lists one page of the jobs of the selected node or of the whole
// cluster: status, type, node, load, age, progress (of a job running
// now), exit code and command, in the page's order or sorted by a column.
// For a running job it shows beside its declared load the cores it used
// and the memory it held when its node last reported them (CPU, MEM), and
// it marks with a "!" a type whose declared load is far from what its runs
// use.
type JobsPane struct {
	styles  Styles
	keys    KeyMap
	width   int
	height  int
	focused bool

	fetched  []*engine.Job               // as the snapshot ordered them
	jobs     []*engine.Job               // as shown: sorted when a sort is chosen
	live     map[runKey]engine.LiveUsage // what the nodes last reported of running jobs
	snap     *Snapshot
	query    Query
	filter   string // the filter as typed
	matching int
	at       time.Time
	cursor   int
	offset   int
	sort     jobSort
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
// listed) and, when focused, the movement and sort keys.
func (p JobsPane) Update(msg tea.Msg) (JobsPane, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		if msg.err != nil {
			break
		}
		p.fetched, p.query, p.matching, p.at = msg.snap.Jobs, msg.snap.Query, msg.snap.Matching, msg.snap.At
		p.live, p.snap = msg.snap.live(), msg.snap
		p.arrange()
	case tea.KeyPressMsg:
		if !p.focused {
			break
		}
		switch {
		case key.Matches(msg, p.keys.Up):
			p.cursor = max(0, p.cursor-1)
		case key.Matches(msg, p.keys.Down):
			p.cursor = max(0, min(len(p.jobs)-1, p.cursor+1))
		case key.Matches(msg, p.keys.Sort):
			p.sort = p.sort.next()
			p.arrange()
		case key.Matches(msg, p.keys.SortReverse):
			p.sort.desc = !p.sort.desc
			p.arrange()
		}
	}
	p.scroll()
	return p, nil
}

// arrange sorts the fetched jobs as chosen, keeping the cursor on the job
// it was on.
func (p *JobsPane) arrange() {
	var id int64
	if j := p.Selected(); j != nil {
		id = j.ID
	}
	p.jobs = p.sort.apply(p.fetched, p.at, p.usage)
	p.cursor = min(p.cursor, max(0, len(p.jobs)-1))
	for i, j := range p.jobs {
		if j.ID == id {
			p.cursor = i
		}
	}
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

// Column widths; type, node and the command share what is left, the
// command the most.
const (
	jobIDW       = 7
	jobStatusW   = 12 // INSTANTIATED
	jobLoadW     = 5
	jobCPUW      = 5 // cores: 12.25
	jobMemW      = 7 // 1023MiB
	jobPriW      = 3 // 100
	jobAgeW      = 5 // 1m30s, as human.Age writes it
	jobBarW      = 6
	jobPctW      = 4 // 100%
	jobProgressW = jobBarW + 1 + jobPctW
	jobExitW     = 5
	jobTypeMinW  = 5 // type and node are never narrower
)

func (p JobsPane) widths() []int {
	cluster := p.query.Node == ""
	cols, priW, useW := 9, 0, 0
	if cluster {
		cols++
	}
	if p.showPriority() {
		cols, priW = cols+1, jobPriW
	}
	if p.showUsage() {
		cols, useW = cols+2, jobCPUW+jobMemW
	}
	fixed := 1 + jobIDW + jobStatusW + jobLoadW + useW + priW + jobAgeW + jobProgressW + jobExitW + cols - 1
	rest := max(0, p.width-fixed)
	typeW, nodeW := 5, 0
	for _, j := range p.jobs {
		typeW = max(typeW, len(p.typeCell(j)))
		if cluster {
			nodeW = max(nodeW, len(j.Node))
		}
	}
	if cluster {
		nodeW = max(5, min(nodeW, 16, rest/4))
	}
	typeW = max(5, min(typeW, 16, rest/4))
	w := []int{1, jobIDW, jobStatusW, typeW}
	if cluster {
		w = append(w, nodeW)
	}
	w = append(w, jobLoadW)
	if useW > 0 {
		w = append(w, jobCPUW, jobMemW)
	}
	if priW > 0 {
		w = append(w, priW)
	}
	return append(w, jobAgeW, jobProgressW, jobExitW, max(0, rest-typeW-nodeW))
}

// showPriority reports whether the pane has a PRI column: when a job shown
// has a priority other than the default, as a terminal's 'jobctl list'.
func (p JobsPane) showPriority() bool {
	return slices.ContainsFunc(p.jobs, func(j *engine.Job) bool { return j.Priority != engine.DefaultPriority })
}

// showUsage reports whether the pane has the CPU and MEM columns: when its
// node has reported the use of a job shown, and the pane is wide enough for
// them beside the type and node columns at their narrowest.
func (p JobsPane) showUsage() bool {
	if !slices.ContainsFunc(p.jobs, func(j *engine.Job) bool { _, ok := p.usage(j); return ok }) {
		return false
	}
	cols, need := 11, jobTypeMinW
	if p.query.Node == "" {
		cols, need = cols+1, need+jobTypeMinW
	}
	if p.showPriority() {
		cols, need = cols+1, need+jobPriW
	}
	need += 1 + jobIDW + jobStatusW + jobLoadW + jobCPUW + jobMemW + jobAgeW + jobProgressW + jobExitW + cols - 1
	return p.width >= need
}

// usage is what a job's node last reported of its run now.
func (p JobsPane) usage(j *engine.Job) (engine.LiveUsage, bool) {
	if !liveRun(j) {
		return engine.LiveUsage{}, false
	}
	u, ok := p.live[runKey{j.ID, j.Attempt}]
	return u, ok
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
	order := "on nodes first"
	if p.sort.col != sortNone {
		order = "sorted by " + strings.ToLower(sortHeads[p.sort.col]) + " " + p.sort.arrow()
	}
	switch {
	case p.matching < 0:
		title += fmt.Sprintf(" · %d shown, %s", len(p.jobs), order)
	case p.matching > len(p.jobs):
		title += fmt.Sprintf(" · %d of %d, %s", len(p.jobs), p.matching, order)
	default:
		title += fmt.Sprintf(" · %d, %s", len(p.jobs), order)
	}
	lines := []string{fit(style.Render(title), p.width)}
	w := p.widths()
	head := []string{"", p.head(sortID), p.head(sortStatus), p.head(sortType)}
	if p.query.Node == "" {
		head = append(head, p.head(sortNode))
	}
	head = append(head, p.head(sortLoad))
	if p.showUsage() {
		head = append(head, p.head(sortCPU), p.head(sortMem))
	}
	if p.showPriority() {
		head = append(head, p.head(sortPriority))
	}
	head = append(head, p.head(sortAge), p.head(sortProgress), p.head(sortExit), p.head(sortCommand))
	lines = append(lines, p.styles.ColumnHead.Render(row(head, w)))
	if len(p.jobs) == 0 {
		lines = append(lines, p.styles.Dim.Render("  no jobs"))
	}
	for i := p.offset; i < len(p.jobs) && i < p.offset+p.rows(); i++ {
		lines = append(lines, p.rowView(i, w))
	}
	return joinLines(lines, p.height, p.width)
}

// head is a column's head, with the sort's arrow on the sorted one.
func (p JobsPane) head(c sortColumn) string {
	if p.sort.col == c {
		return sortHeads[c] + p.sort.arrow()
	}
	return sortHeads[c]
}

func (p JobsPane) rowView(i int, w []int) string {
	j := p.jobs[i]
	typ := j.Type
	if _, off := p.snap.loadOff(j.Type); off {
		// The flag stays in view when the type is cut to its column.
		typ = fit(j.Type, max(0, min(len(j.Type), w[3]-1))) + p.styles.Warn.Render("!")
	}
	cells := []string{marker(i == p.cursor, p.focused), strconv.FormatInt(j.ID, 10), p.styles.status(j.Status), typ}
	if p.query.Node == "" {
		cells = append(cells, j.Node)
	}
	progress := ""
	if liveRun(j) {
		progress = bar(float64(j.Progress)/100, jobBarW, p.styles.Progress, p.styles.BarEmpty) + " " +
			fitRight(strconv.Itoa(j.Progress)+"%", jobPctW)
	}
	exit := ""
	if j.ExitCode != nil {
		exit = strconv.Itoa(*j.ExitCode)
	}
	cells = append(cells, fitRight(engine.FormatNumber(j.Load), jobLoadW))
	if p.showUsage() {
		cpu, mem := "", ""
		if u, ok := p.usage(j); ok {
			cpu, mem = engine.FormatNumber(u.Cores), human.Bytes(u.Memory)
		}
		cells = append(cells, fitRight(cpu, jobCPUW), fitRight(mem, jobMemW))
	}
	if p.showPriority() {
		cells = append(cells, fitRight(strconv.Itoa(j.Priority), jobPriW))
	}
	cells = append(cells,
		fitRight(human.Age(p.at.Sub(j.CreatedAt)), jobAgeW),
		progress,
		fitRight(exit, jobExitW),
		commandText(j),
	)
	return selectRow(p.styles, row(cells, w), i == p.cursor && p.focused)
}

// typeCell is a job's type as the pane shows it: with a "!" when the
// type's declared load is far from what its runs use (see 'jobctl stats').
func (p JobsPane) typeCell(j *engine.Job) string {
	if _, off := p.snap.loadOff(j.Type); off {
		return j.Type + "!"
	}
	return j.Type
}

// liveRun reports whether a job has a run on a node now, whose progress
// means something: running, paused there, being cancelled, or waiting for
// its children.
func liveRun(j *engine.Job) bool {
	switch j.Status {
	case engine.StatusRunning, engine.StatusCancelling, engine.StatusWaiting:
		return true
	case engine.StatusPaused:
		return j.Node != ""
	}
	return false
}

// commandText is what a job runs, in one line: its arguments, each
// quoted where its bounds would not show, or else its operation.
func commandText(j *engine.Job) string {
	if len(j.Args) == 0 {
		return j.Operation
	}
	out := make([]string, len(j.Args))
	for i, a := range j.Args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return cleanLine(strings.Join(out, " "))
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

// sortColumn is a column the jobs pane sorts by; sortNone keeps the
// page's own order.
type sortColumn int

const (
	sortNone sortColumn = iota
	sortID
	sortStatus
	sortType
	sortNode
	sortLoad
	sortCPU
	sortMem
	sortPriority
	sortAge
	sortProgress
	sortExit
	sortCommand
	sortColumns // how many
)

// sortHeads are the columns' heads.
var sortHeads = [sortColumns]string{"", "ID", "STATUS", "TYPE", "NODE", "LOAD", "CPU", "MEM", "PRI", "AGE", "PROGRESS", "EXIT", "COMMAND"}

// jobSort is the jobs pane's order: a column and a direction.
type jobSort struct {
	col  sortColumn
	desc bool
}

// next is the next column, ascending; after the last, the page's order.
func (s jobSort) next() jobSort {
	return jobSort{col: (s.col + 1) % sortColumns}
}

func (s jobSort) arrow() string {
	if s.desc {
		return "▼"
	}
	return "▲"
}

// apply returns jobs in the sort's order; equal ones keep theirs. usage is
// what a job's node last reported of its run, for the CPU and MEM columns.
func (s jobSort) apply(jobs []*engine.Job, at time.Time, usage func(*engine.Job) (engine.LiveUsage, bool)) []*engine.Job {
	if s.col == sortNone {
		return jobs
	}
	out := slices.Clone(jobs)
	slices.SortStableFunc(out, func(a, b *engine.Job) int {
		c := s.compare(a, b, at, usage)
		if s.desc {
			return -c
		}
		return c
	})
	return out
}

func (s jobSort) compare(a, b *engine.Job, at time.Time, usage func(*engine.Job) (engine.LiveUsage, bool)) int {
	switch s.col {
	case sortID:
		return cmp.Compare(a.ID, b.ID)
	case sortStatus:
		return cmp.Compare(slices.Index(engine.AllStatuses, a.Status), slices.Index(engine.AllStatuses, b.Status))
	case sortType:
		return strings.Compare(a.Type, b.Type)
	case sortNode:
		return strings.Compare(a.Node, b.Node)
	case sortLoad:
		return cmp.Compare(a.Load, b.Load)
	case sortCPU:
		return cmp.Compare(usedCores(a, usage), usedCores(b, usage))
	case sortMem:
		return cmp.Compare(usedMemory(a, usage), usedMemory(b, usage))
	case sortPriority:
		return cmp.Compare(a.Priority, b.Priority)
	case sortAge:
		return cmp.Compare(at.Sub(a.CreatedAt), at.Sub(b.CreatedAt))
	case sortProgress:
		return cmp.Compare(shownProgress(a), shownProgress(b))
	case sortExit:
		return cmp.Compare(exitRank(a), exitRank(b))
	case sortCommand:
		return strings.Compare(commandText(a), commandText(b))
	}
	return 0
}

// shownProgress is the progress the pane shows, -1 for none.
func shownProgress(j *engine.Job) int {
	if liveRun(j) {
		return j.Progress
	}
	return -1
}

// usedCores and usedMemory are the figures the pane shows of a job's run,
// -1 for none, so jobs without a report come before every figure.
func usedCores(j *engine.Job, usage func(*engine.Job) (engine.LiveUsage, bool)) float64 {
	if u, ok := usage(j); ok {
		return u.Cores
	}
	return -1
}

func usedMemory(j *engine.Job, usage func(*engine.Job) (engine.LiveUsage, bool)) int64 {
	if u, ok := usage(j); ok {
		return u.Memory
	}
	return -1
}

// exitRank orders jobs without an exit code before every code.
func exitRank(j *engine.Job) int64 {
	if j.ExitCode == nil {
		return -1 << 40
	}
	return int64(*j.ExitCode)
}

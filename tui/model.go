package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

// DefaultInterval is how often the dashboard refreshes unless told.
const DefaultInterval = time.Second

// Smallest screen the dashboard draws on.
const (
	minWidth  = 40
	minHeight = 10
)

// state is what the screen is doing: which keys mean what.
type state int

const (
	stateBrowse  state = iota // moving in the panes
	stateFilter               // typing the filter
	stateConfirm              // asking before an action
	stateHelp                 // the help screen
	stateExplain              // an explanation
	stateDetail               // one job's detail, following its log
	stateLogs                 // one job's log, following
)

// statusTTL is how long an action's result stays on the status line.
const statusTTL = 4 * time.Second

// pane is where the movement keys move.
type pane int

const (
	paneNodes pane = iota
	paneJobs
)

// Messages.
type (
	// tickMsg asks for a refresh; seq tells a current tick from one a
	// refresh made outside the ticking has made stale.
	tickMsg struct{ seq int }
	// snapshotMsg is a refresh's result.
	snapshotMsg struct {
		snap *Snapshot
		err  error
	}
	// actionMsg is an action's result, in words.
	actionMsg struct {
		text string
		err  error
	}
	// explainMsg is an explanation to show.
	explainMsg struct {
		e   *dispatch.Explanation
		err error
	}
	// inspectMsg is a read of the job the detail or log view shows.
	inspectMsg struct {
		id  int64
		in  *Inspection
		err error
	}
)

// Options configure a Model.
type Options struct {
	// Context bounds every fetch and action.
	Context context.Context
	Fetch   FetchFunc
	// Inspect reads the job the detail and log views show.
	Inspect  InspectFunc
	Actions  Actions
	Interval time.Duration // 0: DefaultInterval
	Styles   Styles
	Keys     *KeyMap // nil: DefaultKeyMap
	// Clock says when an action's result has been on the status line
	// long enough; nil: the system clock.
	Clock engine.Clock
}

// Model is the dashboard.
type Model struct {
	ctx      context.Context
	fetch    FetchFunc
	inspect  InspectFunc
	actions  Actions
	interval time.Duration
	styles   Styles
	keys     KeyMap
	clock    engine.Clock

	state  state
	back   state // where a dialog, the explanation or the help returns to
	focus  pane
	width  int
	height int

	header  Header
	nodes   NodesTable
	jobs    JobsPane
	help    Help
	confirm Confirm
	filter  Filter
	explain ExplainView
	detail  DetailView
	logs    LogView

	query     Query
	fetching  bool // a refresh is under way
	refetch   bool // refresh again as soon as it is back
	recount   bool // the next refresh counts the jobs afresh
	tickSeq   int
	message   string    // the last action's result
	err       error     // the last action's or refresh's error
	messageAt time.Time // when message or err was set, on the clock

	// open is the job the detail or log view shows, nil while neither
	// is open.
	open *openJob
}

// openJob is what the detail and log views know of their job.
type openJob struct {
	id       int64
	in       *Inspection
	log      *logBuffer
	err      error
	fetching bool // a read is under way
	// fromDetail: the log view was opened from the detail, which esc
	// returns to.
	fromDetail bool
}

// New returns the dashboard; Init starts its first refresh.
func New(o Options) Model {
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	keys := DefaultKeyMap()
	if o.Keys != nil {
		keys = *o.Keys
	}
	if o.Clock == nil {
		o.Clock = engine.SystemClock{}
	}
	m := Model{
		ctx: o.Context, fetch: o.Fetch, inspect: o.Inspect, actions: o.Actions, interval: o.Interval,
		styles: o.Styles, keys: keys, clock: o.Clock,
		header:  NewHeader(o.Styles),
		nodes:   NewNodesTable(o.Styles, keys),
		jobs:    NewJobsPane(o.Styles, keys),
		help:    NewHelp(o.Styles, keys),
		confirm: NewConfirm(o.Styles, keys),
		filter:  NewFilter(o.Styles, keys),
		explain: NewExplainView(o.Styles, keys),
		detail:  NewDetailView(o.Styles),
		logs:    NewLogView(o.Styles, keys),
	}
	m.nodes.SetFocused(true)
	m.setSize(80, 24)
	return m
}

// Init starts the first refresh.
func (m Model) Init() tea.Cmd {
	return m.fetchCmd()
}

func (m Model) fetchCmd() tea.Cmd {
	ctx, fetch, q := m.ctx, m.fetch, m.query
	q.Recount = m.recount
	return func() tea.Msg {
		s, err := fetch(ctx, q)
		return snapshotMsg{snap: s, err: err}
	}
}

func (m Model) tickCmd() tea.Cmd {
	seq := m.tickSeq
	return tea.Tick(m.interval, func(time.Time) tea.Msg { return tickMsg{seq: seq} })
}

// refresh reads the cluster now, out of the ticking's turn; a refresh
// under way is followed by another, so what changed since it started shows.
func (m *Model) refresh() tea.Cmd {
	if m.fetching {
		m.refetch = true
		return nil
	}
	m.fetching = true
	m.tickSeq++ // the tick waiting now would refresh twice
	cmd := m.fetchCmd()
	m.recount = false
	return cmd
}

func (m *Model) setSize(w, h int) {
	m.width, m.height = w, h
	body := max(0, h-4) // header (2), status line, help line
	nodeRows := max(1, min(len(m.nodes.nodes), (body-4)/2))
	nodesH := min(body, nodeRows+2)
	m.header.SetSize(w, 2)
	m.nodes.SetSize(w, nodesH)
	m.jobs.SetSize(w, body-nodesH)
	m.help.SetSize(w, body)
	m.confirm.SetSize(w, 1)
	m.filter.SetSize(w, 1)
	m.explain.SetSize(w, body)
	m.detail.SetSize(w, body)
	m.logs.SetSize(w, body)
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		return m, nil
	case tickMsg:
		if msg.seq != m.tickSeq {
			return m, nil
		}
		m.expireStatus()
		return m, tea.Batch(m.refresh(), m.inspectCmd())
	case snapshotMsg:
		return m.updateSnapshot(msg)
	case inspectMsg:
		m.updateInspection(msg)
		return m, nil
	case actionMsg:
		m.setStatus(msg.text, msg.err)
		m.recount = true
		return m, tea.Batch(m.refresh(), m.inspectCmd())
	case explainMsg:
		if msg.err != nil {
			m.setStatus("", msg.err)
			return m, nil
		}
		m.setStatus("", nil)
		m.explain.Show(msg.e)
		m.back, m.state = m.bodyState(), stateExplain
		return m, nil
	case tea.KeyPressMsg:
		return m.updateKey(msg)
	}
	// The cursors' own messages.
	var cmd tea.Cmd
	switch m.state {
	case stateFilter:
		m.filter, cmd = m.filter.Update(msg)
	case stateConfirm:
		m.confirm, cmd = m.confirm.Update(msg)
	}
	return m, cmd
}

// setStatus puts an action's result, or its error, on the status line
// until statusTTL has passed.
func (m *Model) setStatus(text string, err error) {
	m.message, m.err, m.messageAt = text, err, m.clock.Now()
}

// expireStatus clears an action's result once it has been shown for
// statusTTL; a refresh's error stays while the database does not answer.
func (m *Model) expireStatus() {
	if m.message == "" && (m.err == nil || isRefreshError(m.err)) {
		return
	}
	if m.clock.Now().Sub(m.messageAt) >= statusTTL {
		m.message = ""
		if m.err != nil && !isRefreshError(m.err) {
			m.err = nil
		}
	}
}

func isRefreshError(err error) bool { return strings.HasPrefix(err.Error(), "refresh: ") }

func (m Model) updateSnapshot(msg snapshotMsg) (tea.Model, tea.Cmd) {
	m.fetching = false
	if msg.err != nil {
		if m.ctx.Err() != nil {
			return m, nil // shutting down
		}
		m.err = fmt.Errorf("refresh: %w", msg.err)
	} else {
		if m.err != nil && isRefreshError(m.err) {
			m.err = nil // the database answers again
		}
		m.header, _ = m.header.Update(msg)
		m.nodes, _ = m.nodes.Update(msg)
		m.jobs, _ = m.jobs.Update(msg)
		m.setSize(m.width, m.height) // the nodes pane fits its rows
	}
	m.expireStatus()
	if m.refetch {
		m.refetch = false
		return m, m.refresh()
	}
	return m, m.tickCmd()
}

// openView opens the detail or log view on job id and reads it.
func (m *Model) openView(id int64, st state) tea.Cmd {
	if m.open == nil || m.open.id != id {
		m.open = &openJob{id: id, log: newLogBuffer()}
		m.detail.Show(id)
		m.logs.Show(id)
	}
	m.state = st
	m.showOpen()
	return m.inspectCmd()
}

// closeView leaves the detail or log view.
func (m *Model) closeView() {
	m.open = nil
	m.state = stateBrowse
}

// inspectCmd reads the open job, unless no view is open or a read is
// under way: each refresh reads it once.
func (m *Model) inspectCmd() tea.Cmd {
	o := m.open
	if o == nil || o.fetching || m.inspect == nil {
		return nil
	}
	o.fetching = true
	ctx, inspect := m.ctx, m.inspect
	q := InspectQuery{ID: o.id, AfterSeq: o.log.afterSeq, Explain: m.bodyState() == stateDetail}
	return func() tea.Msg {
		in, err := inspect(ctx, q)
		return inspectMsg{id: q.ID, in: in, err: err}
	}
}

func (m *Model) updateInspection(msg inspectMsg) {
	o := m.open
	if o == nil || o.id != msg.id {
		return // a read for a view closed since
	}
	o.fetching = false
	o.err = msg.err
	if msg.err == nil {
		if msg.in.Explanation == nil && o.in != nil {
			msg.in.Explanation = o.in.Explanation // read while the detail was shown
		}
		o.in = msg.in
		o.log.add(msg.in.Log)
	}
	m.showOpen()
}

// showOpen hands the open job to its views.
func (m *Model) showOpen() {
	o := m.open
	if o == nil {
		return
	}
	lines := o.log.Lines()
	m.detail.SetData(o.in, lines, o.err)
	var job *engine.Job
	if o.in != nil {
		job = o.in.Job
	}
	m.logs.SetData(job, lines)
}

// bodyState is what the screen's body shows under a dialog.
func (m Model) bodyState() state {
	switch m.state {
	case stateConfirm, stateFilter, stateExplain, stateHelp:
		return m.back
	}
	return m.state
}

func (m Model) updateKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch m.state {
	case stateFilter:
		m.filter, cmd = m.filter.Update(msg)
		if !m.filter.IsOpen() {
			m.state = stateBrowse
			if m.filter.Changed() {
				return m, m.applyFilter()
			}
		}
		return m, cmd
	case stateConfirm:
		m.confirm, cmd = m.confirm.Update(msg)
		if !m.confirm.IsOpen() {
			m.state = m.back
			if cmd == nil {
				m.setStatus("left as it was", nil)
			}
		}
		return m, cmd
	case stateExplain:
		m.explain, cmd = m.explain.Update(msg)
		if !m.explain.IsOpen() {
			m.state = m.back
		}
		return m, cmd
	case stateHelp:
		if key.Matches(msg, m.keys.Help) || key.Matches(msg, m.keys.Back) {
			m.state = m.back
		}
		return m, nil
	case stateDetail, stateLogs:
		return m.updateView(msg)
	}
	return m.updateBrowse(msg)
}

// updateView handles the keys of the detail and log views: the job's
// actions act on the job they show.
func (m Model) updateView(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	switch {
	case msg.String() == "ctrl+c":
		return m, tea.Quit
	case key.Matches(msg, k.Back):
		if m.state == stateLogs && m.open.fromDetail {
			m.state, m.open.fromDetail = stateDetail, false
			return m, m.inspectCmd() // with the explanation again
		}
		m.closeView()
	case key.Matches(msg, k.Logs) && m.state == stateDetail:
		m.state, m.open.fromDetail = stateLogs, true
	case key.Matches(msg, k.Help):
		m.back, m.state = m.state, stateHelp
	case m.state == stateLogs && key.Matches(msg, k.Up):
		m.logs.Scroll(1, false)
	case m.state == stateLogs && key.Matches(msg, k.Down):
		m.logs.Scroll(-1, false)
	case m.state == stateLogs && key.Matches(msg, k.PageUp):
		m.logs.Scroll(m.logs.Page(), false)
	case m.state == stateLogs && key.Matches(msg, k.PageDown):
		m.logs.Scroll(-m.logs.Page(), false)
	case m.state == stateLogs && key.Matches(msg, k.End):
		m.logs.Scroll(0, true)
	case key.Matches(msg, k.Cancel), key.Matches(msg, k.Requeue), key.Matches(msg, k.Pause), key.Matches(msg, k.Explain):
		return m.jobKey(msg, m.openedJob())
	}
	return m, nil
}

// openedJob is the job the detail or log view shows, as last read; nil
// before the first read.
func (m Model) openedJob() *engine.Job {
	if m.open == nil || m.open.in == nil {
		return nil
	}
	return m.open.in.Job
}

func (m Model) updateBrowse(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.back, m.state = stateBrowse, stateHelp
	case key.Matches(msg, k.Tab):
		m.setFocus(1 - m.focus)
	case key.Matches(msg, k.Up), key.Matches(msg, k.Down):
		if m.focus == paneNodes {
			m.nodes, _ = m.nodes.Update(msg)
		} else {
			m.jobs, _ = m.jobs.Update(msg)
		}
	case key.Matches(msg, k.Sort), key.Matches(msg, k.SortReverse):
		m.jobs.SetFocused(true) // the sort keys work from either pane
		m.jobs, _ = m.jobs.Update(msg)
		m.jobs.SetFocused(m.focus == paneJobs)
	case m.focus == paneJobs && key.Matches(msg, k.Open):
		j := m.jobs.Selected()
		if j == nil {
			return m.noSelection("job")
		}
		return m, m.openView(j.ID, stateDetail)
	case key.Matches(msg, k.Logs):
		j := m.jobs.Selected()
		if j == nil {
			return m.noSelection("job")
		}
		return m, m.openView(j.ID, stateLogs)
	case key.Matches(msg, k.Scope):
		n := m.nodes.Selected()
		if n == nil || m.focus != paneNodes {
			return m, nil
		}
		m.query.Node = n.Name
		m.jobs.ResetCursor()
		m.setFocus(paneJobs)
		return m, m.refresh()
	case key.Matches(msg, k.All):
		if m.query.Node == "" {
			return m, nil
		}
		m.query.Node = ""
		m.jobs.ResetCursor()
		return m, m.refresh()
	case key.Matches(msg, k.Filter):
		m.state = stateFilter
		return m, m.filter.Open()
	case key.Matches(msg, k.Cancel), key.Matches(msg, k.Requeue), key.Matches(msg, k.Pause), key.Matches(msg, k.Explain):
		return m.jobKey(msg, m.jobs.Selected())
	case key.Matches(msg, k.Maintenance):
		n := m.nodes.Selected()
		if n == nil {
			return m.noSelection("node")
		}
		prompt := fmt.Sprintf("Put node %s in maintenance (no new jobs)?", n.Name)
		if n.Maintenance {
			prompt = fmt.Sprintf("Take node %s out of maintenance (it takes jobs again)?", n.Name)
		}
		name, on := n.Name, !n.Maintenance
		return m, m.ask(prompt, func(reason string) tea.Cmd { return m.maintenanceCmd(name, on, reason) })
	case key.Matches(msg, k.Drain):
		n := m.nodes.Selected()
		if n == nil {
			return m.noSelection("node")
		}
		name := n.Name
		return m, m.ask(fmt.Sprintf("Drain node %s: no new jobs, its %d running go on?", n.Name, n.Running),
			func(reason string) tea.Cmd { return m.drainCmd(name, reason) })
	}
	return m, nil
}

// jobKey carries out a job's action key on j: cancel and requeue ask
// first (with a reason to give), pause and resume do not, explain shows
// the dispatcher's verdict.
func (m Model) jobKey(msg tea.KeyPressMsg, j *engine.Job) (tea.Model, tea.Cmd) {
	if j == nil {
		return m.noSelection("job")
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Cancel):
		return m.askJob(j, engine.VerbCancel, "Cancel %s?")
	case key.Matches(msg, k.Requeue):
		return m.askJob(j, engine.VerbRequeue, "Requeue %s, to run again?")
	case key.Matches(msg, k.Pause):
		verb := engine.VerbPause
		if j.Status == engine.StatusPaused {
			verb = engine.VerbResume
		}
		return m, m.verbCmd(j.ID, verb, "")
	case key.Matches(msg, k.Explain):
		m.setStatus(fmt.Sprintf("explaining job %d…", j.ID), nil)
		return m, m.explainCmd(j.ID)
	}
	return m, nil
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	m.nodes.SetFocused(p == paneNodes)
	m.jobs.SetFocused(p == paneJobs)
}

// ask opens the confirm dialog over what the screen shows; action makes
// the change's command from the reason typed.
func (m *Model) ask(prompt string, action func(reason string) tea.Cmd) tea.Cmd {
	m.back = m.state
	m.state = stateConfirm
	return m.confirm.Open(prompt, action)
}

func (m Model) askJob(j *engine.Job, verb engine.Verb, prompt string) (tea.Model, tea.Cmd) {
	id := j.ID
	cmd := m.ask(fmt.Sprintf(prompt, describeJob(j)), func(reason string) tea.Cmd { return m.verbCmd(id, verb, reason) })
	return m, cmd
}

func (m Model) noSelection(what string) (tea.Model, tea.Cmd) {
	m.setStatus("", fmt.Errorf("no %s selected", what))
	return m, nil
}

func (m *Model) applyFilter() tea.Cmd {
	m.query.Statuses, m.query.Types = ParseFilter(m.filter.Value())
	m.jobs.SetFilter(m.filter.Value())
	m.jobs.ResetCursor()
	return m.refresh()
}

func (m Model) verbCmd(id int64, verb engine.Verb, reason string) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		j, err := a.JobVerb(ctx, id, verb, reason)
		if err != nil {
			return actionMsg{err: err}
		}
		return actionMsg{text: fmt.Sprintf("job %d %s: now %s", id, verb.PastTense(), j.Status)}
	}
}

func (m Model) maintenanceCmd(name string, on bool, reason string) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		if err := a.NodeMaintenance(ctx, name, on, reason); err != nil {
			return actionMsg{err: err}
		}
		if on {
			return actionMsg{text: fmt.Sprintf("node %s is in maintenance: no new jobs", name)}
		}
		return actionMsg{text: fmt.Sprintf("node %s is out of maintenance", name)}
	}
}

func (m Model) drainCmd(name, reason string) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		active, err := a.NodeDrain(ctx, name, reason)
		if err != nil {
			return actionMsg{err: err}
		}
		if active == 0 {
			return actionMsg{text: fmt.Sprintf("node %s is drained: no job is active on it", name)}
		}
		return actionMsg{text: fmt.Sprintf("node %s is draining: %d %s still active", name, active, plural(active, "job", "jobs"))}
	}
}

func (m Model) explainCmd(id int64) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		e, err := a.Explain(ctx, id)
		return explainMsg{e: e, err: err}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// View draws the whole screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	switch m.state {
	case stateFilter:
		if c := m.filter.Cursor(); c != nil {
			c.Y = m.height - 2 // the status line
			v.Cursor = c
		}
	case stateConfirm:
		if c := m.confirm.Cursor(); c != nil {
			c.Y = m.height - 1 // the line under the question
			v.Cursor = c
		}
	}
	v.AltScreen = true
	v.WindowTitle = "jobctl top"
	return v
}

// render is the screen as text, exactly width × height.
func (m Model) render() string {
	if m.width < minWidth || m.height < minHeight {
		return joinLines([]string{fmt.Sprintf("terminal %dx%d: top needs %dx%d", m.width, m.height, minWidth, minHeight)}, m.height, m.width)
	}
	parts := []string{m.header.View()}
	body := m.state
	if m.state == stateConfirm || m.state == stateFilter {
		body = m.bodyState()
	}
	switch body {
	case stateHelp:
		parts = append(parts, m.help.View())
	case stateExplain:
		parts = append(parts, m.explain.View())
	case stateDetail:
		parts = append(parts, m.detail.View())
	case stateLogs:
		parts = append(parts, m.logs.View())
	default:
		parts = append(parts, m.nodes.View(), m.jobs.View())
	}
	foot := m.help.ShortView()
	if m.state == stateConfirm {
		foot = m.confirm.InputView()
	}
	parts = append(parts, m.statusLine(), foot)
	return strings.Join(parts, "\n")
}

// statusLine is the dialog being answered, the filter being typed, or the
// last action's result.
func (m Model) statusLine() string {
	switch {
	case m.state == stateConfirm:
		return m.confirm.View()
	case m.state == stateFilter:
		return fit(m.filter.View(), m.width)
	case m.err != nil:
		return fit(m.styles.Error.Render("error: "+m.err.Error()), m.width)
	}
	return fit(m.styles.Message.Render(m.message), m.width)
}

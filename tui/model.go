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
)

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
)

// Options configure a Model.
type Options struct {
	// Context bounds every fetch and action.
	Context  context.Context
	Fetch    FetchFunc
	Actions  Actions
	Interval time.Duration // 0: DefaultInterval
	Styles   Styles
	Keys     *KeyMap // nil: DefaultKeyMap
}

// Model is the dashboard.
type Model struct {
	ctx      context.Context
	fetch    FetchFunc
	actions  Actions
	interval time.Duration
	styles   Styles
	keys     KeyMap

	state  state
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

	query    Query
	fetching bool // a refresh is under way
	refetch  bool // refresh again as soon as it is back
	recount  bool // the next refresh counts the jobs afresh
	tickSeq  int
	message  string // the last action's result
	err      error  // the last action's or refresh's error
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
	m := Model{
		ctx: o.Context, fetch: o.Fetch, actions: o.Actions, interval: o.Interval,
		styles: o.Styles, keys: keys,
		header:  NewHeader(o.Styles),
		nodes:   NewNodesTable(o.Styles, keys),
		jobs:    NewJobsPane(o.Styles, keys),
		help:    NewHelp(o.Styles, keys),
		confirm: NewConfirm(o.Styles, keys),
		filter:  NewFilter(o.Styles, keys),
		explain: NewExplainView(o.Styles, keys),
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
		return m, m.refresh()
	case snapshotMsg:
		return m.updateSnapshot(msg)
	case actionMsg:
		m.message, m.err = msg.text, msg.err
		m.recount = true
		return m, m.refresh()
	case explainMsg:
		if msg.err != nil {
			m.message, m.err = "", msg.err
			return m, nil
		}
		m.message, m.err = "", nil
		m.explain.Show(msg.e)
		m.state = stateExplain
		return m, nil
	case tea.KeyPressMsg:
		return m.updateKey(msg)
	}
	if m.state == stateFilter {
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg) // the cursor's own messages
		return m, cmd
	}
	return m, nil
}

func (m Model) updateSnapshot(msg snapshotMsg) (tea.Model, tea.Cmd) {
	m.fetching = false
	if msg.err != nil {
		if m.ctx.Err() != nil {
			return m, nil // shutting down
		}
		m.err = fmt.Errorf("refresh: %w", msg.err)
	} else {
		if m.err != nil && strings.HasPrefix(m.err.Error(), "refresh: ") {
			m.err = nil // the database answers again
		}
		m.header, _ = m.header.Update(msg)
		m.nodes, _ = m.nodes.Update(msg)
		m.jobs, _ = m.jobs.Update(msg)
		m.setSize(m.width, m.height) // the nodes pane fits its rows
	}
	if m.refetch {
		m.refetch = false
		return m, m.refresh()
	}
	return m, m.tickCmd()
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
			m.state = stateBrowse
			if cmd == nil {
				m.message, m.err = "left as it was", nil
			}
		}
		return m, cmd
	case stateExplain:
		m.explain, cmd = m.explain.Update(msg)
		if !m.explain.IsOpen() {
			m.state = stateBrowse
		}
		return m, cmd
	case stateHelp:
		if key.Matches(msg, m.keys.Help) || key.Matches(msg, m.keys.Back) {
			m.state = stateBrowse
		}
		return m, nil
	}
	return m.updateBrowse(msg)
}

func (m Model) updateBrowse(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.state = stateHelp
	case key.Matches(msg, k.Tab):
		m.setFocus(1 - m.focus)
	case key.Matches(msg, k.Up), key.Matches(msg, k.Down):
		if m.focus == paneNodes {
			m.nodes, _ = m.nodes.Update(msg)
		} else {
			m.jobs, _ = m.jobs.Update(msg)
		}
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
	case key.Matches(msg, k.Cancel):
		return m.askJob(engine.VerbCancel, "Cancel %s?")
	case key.Matches(msg, k.Requeue):
		return m.askJob(engine.VerbRequeue, "Requeue %s, to run again?")
	case key.Matches(msg, k.Pause):
		j := m.jobs.Selected()
		if j == nil {
			return m.noSelection("job")
		}
		verb := engine.VerbPause
		if j.Status == engine.StatusPaused {
			verb = engine.VerbResume
		}
		return m, m.verbCmd(j.ID, verb)
	case key.Matches(msg, k.Maintenance):
		n := m.nodes.Selected()
		if n == nil {
			return m.noSelection("node")
		}
		prompt := fmt.Sprintf("Put node %s in maintenance (no new jobs)?", n.Name)
		if n.Maintenance {
			prompt = fmt.Sprintf("Take node %s out of maintenance (it takes jobs again)?", n.Name)
		}
		m.ask(prompt, m.maintenanceCmd(n.Name, !n.Maintenance))
	case key.Matches(msg, k.Drain):
		n := m.nodes.Selected()
		if n == nil {
			return m.noSelection("node")
		}
		m.ask(fmt.Sprintf("Drain node %s: no new jobs, its %d running go on?", n.Name, n.Running), m.drainCmd(n.Name))
	case key.Matches(msg, k.Explain):
		j := m.jobs.Selected()
		if j == nil {
			return m.noSelection("job")
		}
		m.message, m.err = fmt.Sprintf("explaining job %d…", j.ID), nil
		return m, m.explainCmd(j.ID)
	}
	return m, nil
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	m.nodes.SetFocused(p == paneNodes)
	m.jobs.SetFocused(p == paneJobs)
}

func (m *Model) ask(prompt string, action tea.Cmd) {
	m.confirm.Open(prompt, action)
	m.state = stateConfirm
}

func (m Model) askJob(verb engine.Verb, prompt string) (tea.Model, tea.Cmd) {
	j := m.jobs.Selected()
	if j == nil {
		return m.noSelection("job")
	}
	m.ask(fmt.Sprintf(prompt, describeJob(j)), m.verbCmd(j.ID, verb))
	return m, nil
}

func (m Model) noSelection(what string) (tea.Model, tea.Cmd) {
	m.message, m.err = "", fmt.Errorf("no %s selected", what)
	return m, nil
}

func (m *Model) applyFilter() tea.Cmd {
	m.query.Statuses, m.query.Types = ParseFilter(m.filter.Value())
	m.jobs.SetFilter(m.filter.Value())
	m.jobs.ResetCursor()
	return m.refresh()
}

func (m Model) verbCmd(id int64, verb engine.Verb) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		j, err := a.JobVerb(ctx, id, verb, "")
		if err != nil {
			return actionMsg{err: err}
		}
		return actionMsg{text: fmt.Sprintf("job %d %s: now %s", id, verb.PastTense(), j.Status)}
	}
}

func (m Model) maintenanceCmd(name string, on bool) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		if err := a.NodeMaintenance(ctx, name, on, ""); err != nil {
			return actionMsg{err: err}
		}
		if on {
			return actionMsg{text: fmt.Sprintf("node %s is in maintenance: no new jobs", name)}
		}
		return actionMsg{text: fmt.Sprintf("node %s is out of maintenance", name)}
	}
}

func (m Model) drainCmd(name string) tea.Cmd {
	ctx, a := m.ctx, m.actions
	return func() tea.Msg {
		active, err := a.NodeDrain(ctx, name, "")
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
	if m.state == stateFilter {
		if c := m.filter.Cursor(); c != nil {
			c.Y = m.height - 2 // the status line
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
	switch m.state {
	case stateHelp:
		parts = append(parts, m.help.View())
	case stateExplain:
		parts = append(parts, m.explain.View())
	default:
		parts = append(parts, m.nodes.View(), m.jobs.View())
	}
	parts = append(parts, m.statusLine(), m.help.ShortView())
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

package tui

import (
	"fmt"
	"strconv"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
	"github.com/jobctl/jobctl/engine/placement"
)

// stateOverloaded styles a live node whose machine holds it back: its
// label ends in OVERLOADED (engine.NodeStatus.Label).
const stateOverloaded = "OVERLOADED"

// nodeStatus is what the STATE column says of a node at now, the database's
// clock: what 'jobctl nodes' says, computed by the same engine.StatusOf.
func nodeStatus(n *engine.Node, now time.Time) engine.NodeStatus { return engine.StatusOf(n, now) }

// stateStyle names the style of a status: its liveness, or for a live node
// what holds it back.
func stateStyle(st engine.NodeStatus) string {
	switch {
	case st.State != engine.NodeOnline:
		return string(st.State)
	case st.Overload.Kind != "":
		return stateOverloaded
	case st.Maintenance:
		return string(engine.NodeMaintenance)
	}
	return string(st.State)
}

// NodesTable is one row per node: state, a load bar, running jobs against
// the maximum, weight and warm-up, machine health and the last heartbeat.
type NodesTable struct {
	styles  Styles
	keys    KeyMap
	width   int
	height  int
	focused bool

	nodes  []*engine.Node
	at     time.Time
	cursor int
	offset int
}

// NewNodesTable returns an empty table.
func NewNodesTable(s Styles, k KeyMap) NodesTable { return NodesTable{styles: s, keys: k} }

// SetSize sets the space the table may use, its title and column heads
// included.
func (t *NodesTable) SetSize(width, height int) {
	t.width, t.height = width, height
	t.scroll()
}

// SetFocused says whether the movement keys move in this table.
func (t *NodesTable) SetFocused(f bool) { t.focused = f }

// Selected is the node under the cursor, nil when there is none.
func (t NodesTable) Selected() *engine.Node {
	if t.cursor < len(t.nodes) {
		return t.nodes[t.cursor]
	}
	return nil
}

// Update takes snapshots (the cursor stays on the same node) and, when
// focused, the movement keys.
func (t NodesTable) Update(msg tea.Msg) (NodesTable, tea.Cmd) {
	switch msg := msg.(type) {
	case snapshotMsg:
		if msg.err != nil {
			break
		}
		var name string
		if n := t.Selected(); n != nil {
			name = n.Name
		}
		// Nodes are judged on the database's clock, as 'jobctl nodes'
		// judges them; the lease is read with it.
		t.nodes, t.at = msg.snap.Nodes, msg.snap.At
		if !msg.snap.Lease.Now.IsZero() {
			t.at = msg.snap.Lease.Now
		}
		t.cursor = min(t.cursor, max(0, len(t.nodes)-1))
		for i, n := range t.nodes {
			if n.Name == name {
				t.cursor = i
			}
		}
	case tea.KeyPressMsg:
		if !t.focused {
			break
		}
		switch {
		case key.Matches(msg, t.keys.Up):
			t.cursor = max(0, t.cursor-1)
		case key.Matches(msg, t.keys.Down):
			t.cursor = max(0, min(len(t.nodes)-1, t.cursor+1))
		}
	}
	t.scroll()
	return t, nil
}

func (t *NodesTable) rows() int { return max(0, t.height-2) }

// scroll keeps the cursor inside the visible rows.
func (t *NodesTable) scroll() {
	rows := t.rows()
	switch {
	case t.cursor < t.offset:
		t.offset = t.cursor
	case rows > 0 && t.cursor >= t.offset+rows:
		t.offset = t.cursor - rows + 1
	}
	t.offset = max(0, min(t.offset, len(t.nodes)-rows))
}

// Column widths; the name and the bar share what is left.
const (
	nodeStateW   = 11 // MAINTENANCE, the widest stored state (explain's STATE)
	nodeLoadW    = 9  // 12.5/16
	nodeJobsW    = 7  // 200/200
	nodeWeightW  = 7  // 37/100 while warming up
	nodeLoadAvgW = 5
	nodeFreeW    = 7 // 12.3GiB
	nodeSeenW    = 5 // 1m30s
)

func (t NodesTable) widths() []int {
	// STATE is as wide as the widest label shown, ONLINE at least and
	// ONLINE,MAINTENANCE at most (longer ones are cut), so the common case
	// leaves the name and the bar their room.
	state := len(engine.NodeOnline)
	for _, n := range t.nodes {
		state = max(state, min(len(nodeStatus(n, t.at).Label()), len("ONLINE,MAINTENANCE")))
	}
	fixed := 2 + state + nodeLoadW + nodeJobsW + nodeWeightW + nodeLoadAvgW + nodeFreeW + nodeSeenW + 8
	rest := max(0, t.width-fixed)
	name := 4
	for _, n := range t.nodes {
		name = max(name, len(n.Name))
	}
	name = max(4, min(name, 20, rest-6))
	return []int{1, name, state, max(0, rest-name), nodeLoadW, nodeJobsW, nodeWeightW, nodeLoadAvgW, nodeFreeW, nodeSeenW}
}

// View renders the title, the column heads and the visible rows.
func (t NodesTable) View() string {
	title := t.styles.PaneTitle
	if t.focused {
		title = t.styles.PaneFocused
	}
	lines := []string{fit(title.Render(fmt.Sprintf("Nodes (%d)", len(t.nodes))), t.width)}
	w := t.widths()
	head := row([]string{"", "NAME", "STATE", "LOAD", "", "JOBS", "WEIGHT", "LAVG", "FREE", "SEEN"}, w)
	lines = append(lines, fit(t.styles.ColumnHead.Render(head), t.width))
	if len(t.nodes) == 0 {
		lines = append(lines, fit(t.styles.Dim.Render("  no node has registered; start one with 'jobctl serve'"), t.width))
	}
	for i := t.offset; i < len(t.nodes) && i < t.offset+t.rows(); i++ {
		lines = append(lines, t.rowView(i, w))
	}
	return joinLines(lines, t.height, t.width)
}

func (t NodesTable) rowView(i int, w []int) string {
	n := t.nodes[i]
	st := nodeStatus(n, t.at)
	factor := 0.0
	if n.MaxLoad > 0 {
		factor = n.Load / n.MaxLoad
	}
	jobs := strconv.Itoa(n.Running)
	if n.MaxJobs > 0 {
		jobs += "/" + strconv.Itoa(n.MaxJobs)
	}
	weight := strconv.Itoa(n.Weight)
	if eff := placement.EffectiveWeight(n, t.at); eff < float64(n.Weight) {
		weight = strconv.Itoa(int(eff)) + "/" + weight // still warming up
	}
	loadAvg, free, seen := "", "", ""
	if n.LoadAvg > 0 || n.Cores > 0 {
		loadAvg = engine.FormatNumber(n.LoadAvg)
	}
	if n.MemAvailable > 0 {
		free = human.Bytes(n.MemAvailable)
	}
	if !n.LastSeen.IsZero() {
		seen = human.Age(t.at.Sub(n.LastSeen))
	}
	cells := []string{
		marker(i == t.cursor, t.focused),
		n.Name,
		t.styles.NodeState[stateStyle(st)].Render(st.Label()),
		bar(factor, w[3], t.styles.loadColor(factor), t.styles.BarEmpty),
		fitRight(engine.FormatNumber(n.Load)+"/"+engine.FormatNumber(n.MaxLoad), w[4]),
		fitRight(jobs, w[5]),
		fitRight(weight, w[6]),
		fitRight(loadAvg, w[7]),
		fitRight(free, w[8]),
		fitRight(seen, w[9]),
	}
	return selectRow(t.styles, row(cells, w), i == t.cursor && t.focused)
}

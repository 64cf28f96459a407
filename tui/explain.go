package tui

import (
	"fmt"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

// ExplainView shows why a job runs where it does or waits, as 'jobctl
// explain' tells it: every node's verdict and the conclusion.
type ExplainView struct {
	styles Styles
	keys   KeyMap
	width  int
	height int

	e      *dispatch.Explanation
	offset int
	open   bool
}

// NewExplainView returns a closed view.
func NewExplainView(s Styles, k KeyMap) ExplainView { return ExplainView{styles: s, keys: k} }

// Show opens the view on an explanation.
func (v *ExplainView) Show(e *dispatch.Explanation) { v.e, v.offset, v.open = e, 0, true }

// IsOpen reports whether the view is shown.
func (v ExplainView) IsOpen() bool { return v.open }

// SetSize sets the view's space.
func (v *ExplainView) SetSize(width, height int) { v.width, v.height = width, height }

// Update scrolls with the movement keys; esc, q or e closes.
func (v ExplainView) Update(msg tea.Msg) (ExplainView, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !v.open {
		return v, nil
	}
	switch {
	case key.Matches(k, v.keys.Back), key.Matches(k, v.keys.Explain):
		v.open = false
	case key.Matches(k, v.keys.Up):
		v.offset = max(0, v.offset-1)
	case key.Matches(k, v.keys.Down):
		v.offset = max(0, min(v.offset+1, len(v.lines())-v.height))
	}
	return v, nil
}

func (v ExplainView) lines() []string {
	e := v.e
	if e == nil {
		return nil
	}
	j := e.Job
	lines := []string{
		v.styles.Title.Render(fmt.Sprintf("Explain job %d", j.ID)) + fmt.Sprintf("  type %s  load %s  ", j.Type, engine.FormatNumber(j.Load)) + v.styles.status(j.Status),
	}
	if e.Dispatchable {
		lines = append(lines, "dispatchable: yes")
	} else {
		lines = append(lines, "dispatchable: no: "+e.HoldReason)
	}
	if e.ParentRule != "" {
		lines = append(lines, "parent: "+e.ParentRule)
	}
	if e.KeptNode != "" {
		lines = append(lines, "kept node: "+e.KeptNode)
	}
	lines = append(lines, "selector: "+e.Selector, "")
	nameW := 4
	for _, n := range e.Nodes {
		nameW = max(nameW, min(20, len(n.Node)))
	}
	w := []int{nameW, nodeStateW, 4, 9, 7, max(0, v.width-nameW-nodeStateW-4-9-7-5)}
	lines = append(lines, v.styles.ColumnHead.Render(row([]string{"NODE", "STATE", "RANK", "LOAD", "JOBS", "VERDICT"}, w)))
	for _, n := range e.Nodes {
		rank, verdict := "", v.styles.NodeState[string(engine.NodeError)].Render(n.Reason)
		if n.Rank > 0 {
			rank, verdict = strconv.Itoa(n.Rank), v.styles.NodeState[string(engine.NodeOnline)].Render(n.Reason)
		}
		jobs := strconv.Itoa(n.Running)
		if n.MaxJobs > 0 {
			jobs += "/" + strconv.Itoa(n.MaxJobs)
		}
		lines = append(lines, row([]string{n.Node, string(n.State), rank,
			engine.FormatNumber(n.Load) + "/" + engine.FormatNumber(n.MaxLoad), jobs, verdict}, w))
	}
	if len(e.Nodes) == 0 {
		lines = append(lines, "no node has registered")
	}
	lines = append(lines, "", v.styles.Title.Render(e.Conclusion))
	if e.Hint != "" {
		lines = append(lines, "hint: "+e.Hint)
	}
	return lines
}

// View renders the visible part and, on its last line, how to close it.
func (v ExplainView) View() string {
	lines := v.lines()
	rows := max(0, v.height-1)
	end := min(len(lines), v.offset+rows)
	shown := append([]string{}, lines[min(v.offset, end):end]...)
	for len(shown) < rows {
		shown = append(shown, "")
	}
	foot := "esc to close"
	if len(lines) > rows {
		foot = "↑/↓ to scroll · " + foot
	}
	return joinLines(append(shown, v.styles.Dim.Render(foot)), v.height, v.width)
}

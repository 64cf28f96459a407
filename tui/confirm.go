package tui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/jobctl/jobctl/engine"
)

// Confirm asks before an action that changes the cluster, with a line to
// type why: enter runs the action with that reason (recorded in its event,
// as --reason is), esc drops it.
type Confirm struct {
	styles Styles
	keys   KeyMap
	width  int

	prompt string
	action func(reason string) tea.Cmd
	input  textinput.Model
	open   bool
}

// NewConfirm returns a closed dialog.
func NewConfirm(s Styles, k KeyMap) Confirm {
	in := textinput.New()
	in.Prompt = "reason (optional): "
	in.CharLimit = engine.MaxEventReason
	in.SetStyles(s.Input)
	in.SetVirtualCursor(false)
	return Confirm{styles: s, keys: k, input: in}
}

// Open asks the question; action runs on enter with the reason typed.
func (c *Confirm) Open(prompt string, action func(reason string) tea.Cmd) tea.Cmd {
	c.prompt, c.action, c.open = prompt, action, true
	c.input.SetValue("")
	return c.input.Focus()
}

// IsOpen reports whether the dialog still waits for an answer.
func (c Confirm) IsOpen() bool { return c.open }

// SetSize sets the width; the dialog is the question's line and the
// reason's.
func (c *Confirm) SetSize(width, _ int) {
	c.width = width
	c.input.SetWidth(max(1, width-len(c.input.Prompt)-1))
}

// Update answers the dialog: enter closes it and returns the action with
// the reason typed, esc closes it; any other key types the reason.
func (c Confirm) Update(msg tea.Msg) (Confirm, tea.Cmd) {
	if !c.open {
		return c, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, c.keys.Yes):
			c.open = false
			c.input.Blur()
			return c, c.action(cleanLine(c.input.Value()))
		case key.Matches(k, c.keys.No):
			c.open = false
			c.input.Blur()
			return c, nil
		}
	}
	var cmd tea.Cmd
	c.input, cmd = c.input.Update(msg)
	return c, cmd
}

// View is the question and how to answer it.
func (c Confirm) View() string {
	return fit(c.styles.Prompt.Render(c.prompt)+c.styles.Dim.Render("  enter: go ahead · esc: leave it"), c.width)
}

// InputView is the line the reason is typed on.
func (c Confirm) InputView() string { return fit(c.input.View(), c.width) }

// Cursor is where the terminal's cursor goes on the reason's line.
func (c Confirm) Cursor() *tea.Cursor { return c.input.Cursor() }

package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Confirm asks before a destructive action: y runs it, n or esc drops it.
type Confirm struct {
	styles Styles
	keys   KeyMap
	width  int

	prompt string
	action tea.Cmd
	open   bool
}

// NewConfirm returns a closed dialog.
func NewConfirm(s Styles, k KeyMap) Confirm { return Confirm{styles: s, keys: k} }

// Open asks the question; action runs on yes.
func (c *Confirm) Open(prompt string, action tea.Cmd) {
	c.prompt, c.action, c.open = prompt, action, true
}

// IsOpen reports whether the dialog still waits for an answer.
func (c Confirm) IsOpen() bool { return c.open }

// SetSize sets the width; the dialog is one line.
func (c *Confirm) SetSize(width, _ int) { c.width = width }

// Update answers the dialog: on yes it closes and returns the action, on no
// it closes; any other key leaves it open.
func (c Confirm) Update(msg tea.Msg) (Confirm, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || !c.open {
		return c, nil
	}
	switch {
	case key.Matches(k, c.keys.Yes):
		c.open = false
		return c, c.action
	case key.Matches(k, c.keys.No):
		c.open = false
	}
	return c, nil
}

// View is the question and the answers.
func (c Confirm) View() string {
	return fit(c.styles.Prompt.Render(c.prompt+" [y/n]"), c.width)
}

package tui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// Filter is the line where `/` types the jobs pane's filter: enter applies
// it (an empty one shows every job again), esc leaves the last one.
type Filter struct {
	keys    KeyMap
	input   textinput.Model
	applied string
	open    bool
	changed bool // the last close applied a new filter
}

// NewFilter returns a closed filter line.
func NewFilter(s Styles, k KeyMap) Filter {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "states and types, e.g. running failed encode"
	in.SetStyles(s.Input)
	// The terminal's own cursor, placed by the root view: no escape codes
	// in the line itself, and no blinking to redraw.
	in.SetVirtualCursor(false)
	return Filter{keys: k, input: in}
}

// Open starts editing the filter in force.
func (f *Filter) Open() tea.Cmd {
	f.open, f.changed = true, false
	f.input.SetValue(f.applied)
	f.input.CursorEnd()
	return f.input.Focus()
}

// IsOpen reports whether the filter is being typed.
func (f Filter) IsOpen() bool { return f.open }

// Changed reports whether the last close applied a different filter.
func (f Filter) Changed() bool { return f.changed }

// Value is the filter in force.
func (f Filter) Value() string { return f.applied }

// SetSize sets the width; the filter is one line.
func (f *Filter) SetSize(width, _ int) { f.input.SetWidth(max(1, width-2)) }

// Update types into the line; enter and esc close it.
func (f Filter) Update(msg tea.Msg) (Filter, tea.Cmd) {
	if !f.open {
		return f, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, f.keys.Apply):
			f.open = false
			f.input.Blur()
			f.changed = f.input.Value() != f.applied
			f.applied = f.input.Value()
			return f, nil
		case k.String() == "esc":
			f.open = false
			f.input.Blur()
			return f, nil
		}
	}
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	return f, cmd
}

// View is the input line.
func (f Filter) View() string { return f.input.View() }

// Cursor is where the terminal's cursor goes on the line while it is typed
// in; nil otherwise.
func (f Filter) Cursor() *tea.Cursor { return f.input.Cursor() }

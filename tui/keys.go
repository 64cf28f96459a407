package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key of the dashboard, with its help.
type KeyMap struct {
	Up, Down         key.Binding
	PageUp, PageDown key.Binding // in the detail and log views
	End              key.Binding // the log view follows new output again
	Tab              key.Binding
	Scope            key.Binding // on a node: the jobs pane shows its jobs
	Open             key.Binding // on a job: its detail
	All              key.Binding // the jobs pane shows the whole cluster
	Filter           key.Binding
	Sort             key.Binding // the jobs pane's next sort column
	SortReverse      key.Binding // the other direction
	Logs             key.Binding
	Cancel           key.Binding
	Pause            key.Binding // pause, or resume a paused job
	Requeue          key.Binding
	Maintenance      key.Binding // on, or off for a node in maintenance
	Drain            key.Binding
	Explain          key.Binding
	Help             key.Binding
	Quit             key.Binding

	// In the dialogs and views.
	Yes, No key.Binding // the confirm dialog: go ahead, or leave it
	Back    key.Binding
	Apply   key.Binding
}

// DefaultKeyMap returns the dashboard's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:      key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup", "page up")),
		PageDown:    key.NewBinding(key.WithKeys("pgdown", "f", "space"), key.WithHelp("pgdn", "page down")),
		End:         key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end", "follow")),
		Tab:         key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "switch pane")),
		Scope:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "node: its jobs")),
		Open:        key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "job: its detail")),
		All:         key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "jobs of all nodes")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by next column")),
		SortReverse: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse the sort")),
		Logs:        key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "job's log")),
		Cancel:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel job")),
		Pause:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume job")),
		Requeue:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "requeue job")),
		Maintenance: key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "maintenance on/off")),
		Drain:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "drain node")),
		Explain:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "explain job")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Yes:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go ahead")),
		No:          key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave it")),
		Back:        key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc", "back")),
		Apply:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
	}
}

// ShortHelp is the one line of keys at the foot of the screen: the most
// used, in words short enough for 80 columns; ? shows them all.
func (k KeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	}
	return []key.Binding{
		short(k.Tab, "pane"), short(k.Open, "open"), short(k.Logs, "logs"), short(k.Sort, "sort"),
		short(k.Filter, "filter"), short(k.Cancel, "cancel"), short(k.Help, "more"), short(k.Quit, "quit"),
	}
}

// FullHelp is the help screen, a column per kind of key.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Tab, k.Scope, k.Open, k.All, k.Filter},
		{k.Sort, k.SortReverse, k.Logs, k.Explain, k.Cancel, k.Pause, k.Requeue},
		{k.Maintenance, k.Drain, k.PageUp, k.End, k.Help, k.Quit},
	}
}

package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key of the dashboard, with its help.
type KeyMap struct {
	Up, Down    key.Binding
	Tab         key.Binding
	Scope       key.Binding // the jobs pane shows the selected node's jobs
	All         key.Binding // the jobs pane shows the whole cluster
	Filter      key.Binding
	Cancel      key.Binding
	Pause       key.Binding // pause, or resume a paused job
	Requeue     key.Binding
	Maintenance key.Binding // on, or off for a node in maintenance
	Drain       key.Binding
	Explain     key.Binding
	Help        key.Binding
	Quit        key.Binding

	// In the dialogs.
	Yes, No key.Binding
	Back    key.Binding
	Apply   key.Binding
}

// DefaultKeyMap returns the dashboard's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:          key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:        key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Tab:         key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "switch pane")),
		Scope:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jobs of node")),
		All:         key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "jobs of all nodes")),
		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Cancel:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel job")),
		Pause:       key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume job")),
		Requeue:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "requeue job")),
		Maintenance: key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "maintenance on/off")),
		Drain:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "drain node")),
		Explain:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "explain job")),
		Help:        key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:        key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Yes:         key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:          key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n", "no")),
		Back:        key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc", "back")),
		Apply:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
	}
}

// ShortHelp is the one line of keys at the foot of the screen.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Tab, k.Filter, k.Cancel, k.Pause, k.Requeue, k.Maintenance, k.Drain, k.Explain, k.Help, k.Quit}
}

// FullHelp is the help screen, a column per kind of key.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Tab, k.Scope, k.All, k.Filter},
		{k.Cancel, k.Pause, k.Requeue, k.Explain},
		{k.Maintenance, k.Drain, k.Help, k.Quit},
	}
}

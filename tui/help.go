package tui

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

// Help shows the keys: one line at the foot of the screen, or every key on
// the help screen.
type Help struct {
	model  help.Model
	keys   KeyMap
	width  int
	height int
}

// NewHelp returns the help for the keymap.
func NewHelp(s Styles, k KeyMap) Help {
	m := help.New()
	m.Styles = s.Help
	return Help{model: m, keys: k}
}

// SetSize sets the space of the help screen; the short line takes width
// only.
func (h *Help) SetSize(width, height int) {
	h.width, h.height = width, height
	h.model.SetWidth(width)
}

// Update has nothing to react to: the root model opens and closes the help
// screen.
func (h Help) Update(_ tea.Msg) (Help, tea.Cmd) { return h, nil }

// ShortView is the one line of keys.
func (h Help) ShortView() string { return fit(h.model.ShortHelpView(h.keys.ShortHelp()), h.width) }

// View is the help screen: every key, then what the node states mean.
func (h Help) View() string {
	lines := []string{"Keys", ""}
	lines = append(lines, splitLines(h.model.FullHelpView(h.keys.FullHelp()))...)
	lines = append(lines, "",
		"c, r, m and d ask first: type a reason if you like (it is recorded with the",
		"change, as --reason is), enter to go ahead, esc to leave it as it was.",
		"Enter on a job: its detail and last log lines, following; l: its whole log.",
		"s sorts the jobs by the next column, S the other way; / filters by state/type.",
		"",
		"Node states, as 'jobctl nodes' shows them: WATCH: a heartbeat went unanswered",
		"or it is late recording that it is alive; LOST: silent past its node lease,",
		"it has stopped its runs and they go back to the queue. MAINTENANCE: no new",
		"jobs; OVERLOADED: its machine is busy (load average) or short of memory.",
		"",
		"esc or ? to close")
	return joinLines(lines, h.height, h.width)
}

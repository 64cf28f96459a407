package tui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"

	"github.com/jobctl/jobctl/engine"
)

// Styles is every look of the dashboard. NewStyles(false) is the plain set:
// no colour and no attributes, for NO_COLOR terminals and golden files;
// whatever the styles, selection and state also show as text.
type Styles struct {
	Color bool

	Title       lipgloss.Style // the first header line
	PaneTitle   lipgloss.Style
	PaneFocused lipgloss.Style // the title of the pane the keys move in
	ColumnHead  lipgloss.Style
	Selected    lipgloss.Style // the selected row of the focused pane
	Dim         lipgloss.Style
	Warn        lipgloss.Style
	Message     lipgloss.Style // an action's result
	Error       lipgloss.Style
	Prompt      lipgloss.Style // the confirm dialog

	JobStatus map[engine.Status]lipgloss.Style
	NodeState map[string]lipgloss.Style

	// Bar colours: load by load factor, and job progress.
	LoadLow, LoadMid, LoadHigh color.Color
	Progress                   color.Color
	BarEmpty                   color.Color

	Help  help.Styles
	Input textinput.Styles
}

// NewStyles returns the coloured styles, or the plain ones when colored is
// false.
func NewStyles(colored bool) Styles {
	plain := lipgloss.NewStyle()
	none := lipgloss.NoColor{}
	s := Styles{
		Color: colored, Title: plain, PaneTitle: plain, PaneFocused: plain, ColumnHead: plain,
		Selected: plain, Dim: plain, Warn: plain, Message: plain, Error: plain, Prompt: plain,
		JobStatus: map[engine.Status]lipgloss.Style{}, NodeState: map[string]lipgloss.Style{},
		LoadLow: none, LoadMid: none, LoadHigh: none, Progress: none, BarEmpty: none,
		Help: help.Styles{
			Ellipsis: plain, ShortKey: plain, ShortDesc: plain, ShortSeparator: plain,
			FullKey: plain, FullDesc: plain, FullSeparator: plain,
		},
	}
	s.Input = textinput.DefaultStyles(true)
	s.Input.Focused = textinput.StyleState{Text: plain, Placeholder: plain, Suggestion: plain, Prompt: plain}
	s.Input.Blurred = s.Input.Focused
	s.Input.Cursor.Blink = false // a blinking cursor would make every frame differ
	if !colored {
		return s
	}

	green, yellow, red := lipgloss.Color("2"), lipgloss.Color("3"), lipgloss.Color("1")
	blue, cyan, gray := lipgloss.Color("4"), lipgloss.Color("6"), lipgloss.Color("8")
	s.Title = plain.Bold(true)
	s.PaneTitle = plain.Foreground(gray)
	s.PaneFocused = plain.Bold(true).Foreground(cyan)
	s.ColumnHead = plain.Bold(true)
	s.Selected = plain.Reverse(true)
	s.Dim = plain.Foreground(gray)
	s.Warn = plain.Foreground(yellow)
	s.Message = plain.Foreground(green)
	s.Error = plain.Foreground(red).Bold(true)
	s.Prompt = plain.Foreground(yellow).Bold(true)
	for st, c := range map[engine.Status]color.Color{
		engine.StatusInstantiated: gray, engine.StatusQueued: cyan, engine.StatusRestart: cyan,
		engine.StatusRunning: green, engine.StatusPaused: yellow,
		engine.StatusWaiting: blue, engine.StatusCancelling: yellow, engine.StatusFinished: green,
		engine.StatusWarning: yellow, engine.StatusFailed: red, engine.StatusCancelled: gray,
		engine.StatusDeleted: gray,
	} {
		s.JobStatus[st] = plain.Foreground(c)
	}
	for st, c := range map[string]color.Color{
		string(engine.NodeOnline): green, string(engine.NodeMaintenance): yellow,
		string(engine.NodeOffline): gray, string(engine.NodeError): red,
		stateOverloaded: red, string(engine.NodeWatch): yellow, string(engine.NodeLost): red,
	} {
		s.NodeState[st] = plain.Foreground(c)
	}
	s.LoadLow, s.LoadMid, s.LoadHigh = green, yellow, red
	s.Progress, s.BarEmpty = blue, gray
	s.Help = help.DefaultDarkStyles()
	s.Input = textinput.DefaultStyles(true)
	s.Input.Cursor.Blink = false
	return s
}

// status styles a job status, plain when it has no style.
func (s Styles) status(st engine.Status) string {
	return s.JobStatus[st].Render(string(st))
}

// loadColor picks the load bar's colour by load factor (load / max load).
func (s Styles) loadColor(factor float64) color.Color {
	switch {
	case factor >= 0.9:
		return s.LoadHigh
	case factor >= 0.7:
		return s.LoadMid
	}
	return s.LoadLow
}

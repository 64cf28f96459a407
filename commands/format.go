package commands

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/jobctl/jobctl/engine/human"
)

// palette colours text when stdout is a colour terminal and leaves it
// alone otherwise. It uses Lip Gloss, the styling of the whole tool, with
// the 16 basic colours so the terminal's own theme decides the shades.
type palette struct{ on bool }

func newPalette(ios *IOStreams) palette { return palette{on: ios.ColorEnabled()} }

var (
	boldStyle   = lipgloss.NewStyle().Bold(true)
	greenStyle  = lipgloss.NewStyle().Foreground(lipgloss.Green)
	redStyle    = lipgloss.NewStyle().Foreground(lipgloss.Red)
	yellowStyle = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	grayStyle   = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack)
)

// paint styles s; Lip Gloss renders the codes unconditionally, and the
// streams decide whether they may be written.
func (p palette) paint(s string, style lipgloss.Style) string {
	if !p.on || s == "" {
		return s
	}
	return style.Render(s)
}

func (p palette) bold(s string) string   { return p.paint(s, boldStyle) }
func (p palette) green(s string) string  { return p.paint(s, greenStyle) }
func (p palette) red(s string) string    { return p.paint(s, redStyle) }
func (p palette) yellow(s string) string { return p.paint(s, yellowStyle) }
func (p palette) gray(s string) string   { return p.paint(s, grayStyle) }

// Times follow one rule everywhere: for a person on a terminal, ages and
// the local zone; for scripts (piped, and in JSON), RFC 3339 in UTC.

// timeCell shows a time for its reader: an age like "5m" on a terminal,
// RFC 3339 in UTC for scripts, and nothing for a time not reached yet.
func timeCell(ios *IOStreams, now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	if !ios.OutIsTerminal {
		return t.UTC().Format(time.RFC3339)
	}
	return human.Age(now.Sub(*t))
}

// untilCell shows a time still ahead, like a RUN AFTER: "in 5m" on a
// terminal, nothing once it has passed; RFC 3339 in UTC for scripts.
func untilCell(ios *IOStreams, now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	if !ios.OutIsTerminal {
		return t.UTC().Format(time.RFC3339)
	}
	if d := t.Sub(now); d > 0 {
		return "in " + human.Age(d)
	}
	return ""
}

// timeValue shows a time in a show block: local time, and its age on a
// terminal.
func timeValue(ios *IOStreams, now time.Time, t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	if !ios.OutIsTerminal {
		return t.UTC().Format(time.RFC3339Nano)
	}
	d := now.Sub(*t)
	if d < 0 {
		return fmt.Sprintf("%s (in %s)", t.In(ios.Zone()).Format(time.RFC3339), human.Age(-d))
	}
	return fmt.Sprintf("%s (%s ago)", t.In(ios.Zone()).Format(time.RFC3339), human.Age(d))
}

// formatFloat prints a load without noise: 1, 0.5, 2.25.
func formatFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// plural picks the word for a count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

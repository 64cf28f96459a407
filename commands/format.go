package commands

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
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
	return age(now.Sub(*t))
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
		return "in " + age(d)
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
		return fmt.Sprintf("%s (in %s)", t.In(ios.Zone()).Format(time.RFC3339), age(-d))
	}
	return fmt.Sprintf("%s (%s ago)", t.In(ios.Zone()).Format(time.RFC3339), age(d))
}

// age renders a duration the way kubectl's AGE column does: one or two
// units, coarser as it grows.
func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 10*time.Minute:
		m, s := int(d.Minutes()), int(d.Seconds())%60
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%ds", m, s)
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 8*time.Hour:
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// formatFloat prints a load without noise: 1, 0.5, 2.25.
func formatFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// formatBytes prints a memory size in binary units; 0 means unknown.
func formatBytes(b int64) string {
	if b <= 0 {
		return ""
	}
	const unit = 1024
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(b), 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}

// plural picks the word for a count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

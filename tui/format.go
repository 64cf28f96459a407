package tui

import (
	"image/color"
	"strings"

	"charm.land/bubbles/v2/progress"
	"github.com/charmbracelet/x/ansi"
)

// fit makes a (possibly styled) string exactly w cells wide: cut with an
// ellipsis when longer, padded with spaces when shorter.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-ansi.StringWidth(s))
}

// fitRight is fit, aligned right: for figures.
func fitRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	return strings.Repeat(" ", w-ansi.StringWidth(s)) + s
}

// row joins cells of the given widths with one space between them.
func row(cells []string, widths []int) string {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = fit(c, widths[i])
	}
	return strings.Join(parts, " ")
}

// bar draws a filled fraction (0 to 1) w cells wide in the full colour.
func bar(fraction float64, w int, full, empty color.Color) string {
	if w <= 0 {
		return ""
	}
	p := progress.New(progress.WithWidth(w), progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))
	p.FullColor, p.EmptyColor = full, empty
	return p.ViewAs(min(1, max(0, fraction)))
}

// marker is the first cell of a row: where the cursor is, in the focused
// pane or the other one, so selection shows without colour too.
func marker(selected, focused bool) string {
	switch {
	case selected && focused:
		return "▸"
	case selected:
		return "›"
	}
	return " "
}

// selectRow highlights the selected row of the focused pane. Its cells'
// own colours are dropped, as they would end the highlight halfway.
func selectRow(s Styles, line string, selected bool) string {
	if !selected || !s.Color {
		return line
	}
	return s.Selected.Render(ansi.Strip(line))
}

// joinLines renders exactly height lines, each exactly width cells wide.
func joinLines(lines []string, height, width int) string {
	if height <= 0 {
		return ""
	}
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], width)
		} else {
			out[i] = strings.Repeat(" ", max(0, width))
		}
	}
	return strings.Join(out, "\n")
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

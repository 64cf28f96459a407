package commands

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// progressLine is one line of progress on stderr that redraws in place
// while a command waits, and goes away when it is done. It draws only when
// stderr is a terminal: piped or redirected, a script's log stays as quiet
// as it always was.
type progressLine struct {
	w     io.Writer
	on    bool
	width int
	shown string // what the line shows now; "" when nothing is drawn
}

// newProgressLine returns a progress line for the streams; it does nothing
// unless stderr is a terminal.
func newProgressLine(ios *IOStreams) *progressLine {
	p := &progressLine{w: ios.ErrOut, on: ios.ErrIsTerminal, width: 80}
	if f, ok := ios.ErrOut.(*os.File); ok && p.on {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			p.width = w
		}
	}
	return p
}

// Show redraws the line with text, cut to the terminal's width so it never
// wraps (a wrapped line could not be redrawn in place).
func (p *progressLine) Show(text string) {
	if !p.on {
		return
	}
	if r := []rune(text); len(r) > p.width-1 {
		text = string(r[:max(p.width-2, 0)]) + "…"
	}
	if text == p.shown {
		return
	}
	p.shown = text
	fmt.Fprint(p.w, "\r\x1b[K"+text)
}

// Clear removes the line, so what is printed next starts a clean line.
func (p *progressLine) Clear() {
	if !p.on || p.shown == "" {
		return
	}
	p.shown = ""
	fmt.Fprint(p.w, "\r\x1b[K")
}

// progressBar draws percent (0-100) as a bar of width cells.
func progressBar(percent, width int) string {
	percent = min(max(percent, 0), 100)
	full := percent * width / 100
	return "[" + strings.Repeat("#", full) + strings.Repeat("-", width-full) + "]"
}

// elapsed formats a waiting time for a progress line: whole seconds, or
// tenths under ten seconds.
func elapsed(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

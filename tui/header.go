package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
)

// Header is the top two lines: where the data comes from, who dispatches,
// how fast, the jobs per state, and the first job type whose declared load
// is far from what its runs use.
type Header struct {
	styles Styles
	width  int
	snap   *Snapshot
	// counted is the last snapshot with counts newer than the one before
	// it, and rate the dispatch rate between those two.
	counted *Snapshot
	rate    float64
	hasRate bool
}

// NewHeader returns an empty header.
func NewHeader(s Styles) Header { return Header{styles: s} }

// Update takes each new snapshot and, when its counts are new, the
// dispatch rate since the last counts.
func (h Header) Update(msg tea.Msg) (Header, tea.Cmd) {
	m, ok := msg.(snapshotMsg)
	if !ok || m.err != nil {
		return h, nil
	}
	h.snap = m.snap
	if h.counted == nil || m.snap.CountsAt.After(h.counted.CountsAt) {
		if rate, ok := DispatchRate(h.counted, m.snap); ok {
			h.rate, h.hasRate = rate, true
		}
		h.counted = m.snap
	}
	return h, nil
}

// SetSize sets the width; the header is always two lines high.
func (h *Header) SetSize(width, _ int) { h.width = width }

// View renders the two lines.
func (h Header) View() string {
	s := h.snap
	if s == nil {
		return fit(h.styles.Title.Render("jobctl top"), h.width) + "\n" + fit("reading the cluster…", h.width)
	}
	// The database comes last: it is the longest and the least likely to
	// change, so a narrow screen cuts it first.
	parts := []string{h.styles.Title.Render(leaseText(s.Lease))}
	if h.hasRate {
		parts = append(parts, "dispatch "+engine.FormatNumber(h.rate)+"/s")
	} else {
		parts = append(parts, "dispatch –/s")
	}
	first := strings.Join(append(parts, "db "+s.Database), "  ")

	var counts []string
	for _, st := range engine.AllStatuses {
		if n := s.Counts[st]; n > 0 {
			counts = append(counts, h.styles.status(st)+" "+fmt.Sprint(n))
		}
	}
	return fit(first, h.width) + "\n" + fit(h.second(counts), h.width)
}

// second is the header's second line: the counts, and after them the
// first job type whose declared load is far off, as far as the width
// allows: the counts spaced, else tight; the note whole, else the type
// alone, else nothing (the jobs pane marks the types too).
func (h Header) second(counts []string) string {
	s := h.snap
	spaced, tight := "no jobs", "no jobs"
	if len(counts) > 0 {
		spaced, tight = strings.Join(counts, "  "), strings.Join(counts, " ")
	}
	var notes []string
	if len(s.LoadsOff) > 0 {
		u, more, short := s.LoadsOff[0], "", ""
		if n := len(s.LoadsOff) - 1; n > 0 {
			more, short = fmt.Sprintf(" (+%d: jobctl stats)", n), fmt.Sprintf(" +%d", n)
		}
		notes = append(notes,
			fmt.Sprintf("! %s: load %s, uses %s cores p95", u.Type, engine.FormatNumber(u.DeclaredLoad), engine.FormatNumber(u.CoresP95))+more,
			"! "+u.Type+short)
	}
	for _, note := range notes {
		for _, c := range []string{spaced, tight} {
			if ansi.StringWidth(c)+2+ansi.StringWidth(note) <= h.width {
				return c + "  " + h.styles.Warn.Render(note)
			}
		}
	}
	if ansi.StringWidth(spaced) > h.width {
		return tight // tighter rather than cut
	}
	return spaced
}

// leaseText names the dispatcher and how long its lease has left.
func leaseText(l engine.Lease) string {
	if !l.Valid() {
		return "lease none (no dispatcher)"
	}
	left := l.Remaining()
	text := fmt.Sprintf("%.1fs", left.Seconds())
	if left >= time.Minute {
		text = human.Age(left)
	}
	return "lease " + l.Owner + " " + text
}

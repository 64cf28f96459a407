package simulate

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// levels draw a load factor from idle to full; anything above full (an
// oversized job running alone) is drawn full.
var levels = []rune(" ▁▂▃▄▅▆▇█")

// WriteTimeline draws each node's load factor over a run as one line of
// width block characters, each the average over its slice of the run.
func WriteTimeline(w io.Writer, r *Result, width int) error {
	t := r.Timeline
	if t == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: load factor per node over %s", r.Selector, formatSpan(t.End))
	if t.End > 0 {
		fmt.Fprintf(&b, ", %s per column", formatSpan(t.End/time.Duration(width)))
	}
	b.WriteString("\n")
	nameWidth := 0
	for _, n := range t.Nodes {
		nameWidth = max(nameWidth, len(n.Name))
	}
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "  %-*s |", nameWidth, n.Name)
		for _, f := range n.Buckets(t.End, width) {
			b.WriteRune(level(f))
		}
		b.WriteString("|\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func level(f float64) rune {
	top := len(levels) - 1
	switch {
	case f <= 0:
		return levels[0]
	case f >= 1:
		return levels[top]
	}
	return levels[max(1, int(f*float64(top)+0.5))]
}

// formatSpan shows a span of simulated time briefly: 1h2m, 3.5s.
func formatSpan(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

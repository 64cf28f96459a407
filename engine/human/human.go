// Package human writes durations and sizes the way the command line and
// `jobctl top` show them to a person: short, so they fit a column, and the
// same in both.
package human

import (
	"fmt"
	"strconv"
	"time"
)

// Age renders a duration the way kubectl's AGE column does: one or two
// units, coarser as it grows (45s, 1m30s, 42m, 2h5m, 30h, 3d); never more
// than five cells below 27 years. A negative duration is 0s.
func Age(d time.Duration) string {
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

// binaryUnits are the units Bytes writes, each 1024 times the one before.
var binaryUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// Bytes renders a memory size in the largest binary unit it reaches, in at
// most seven cells: whole bytes, KiB and MiB (640KiB, 812MiB), and from a
// GiB on one decimal below 100 (1.5GiB, 22.3GiB) and rounded whole above
// (123GiB).
// Zero or less is a size not known, and renders empty.
func Bytes(b int64) string {
	if b <= 0 {
		return ""
	}
	unit, v := 0, float64(b)
	for v >= 1024 && unit < len(binaryUnits)-1 {
		v /= 1024
		unit++
	}
	if unit <= 2 { // B, KiB, MiB: a fraction says nothing a reader needs
		return strconv.FormatInt(int64(v), 10) + binaryUnits[unit]
	}
	if v < 99.95 {
		return strconv.FormatFloat(v, 'f', 1, 64) + binaryUnits[unit]
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + binaryUnits[unit]
}

package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatNumber formats a load or load average for an operator: at most two
// decimals, no trailing zeros, so 0.1+0.2 reads "0.3" and 8.0 reads "8".
func FormatNumber(f float64) string {
	r := math.Round(f*100) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// FormatBytes formats a byte count as MiB below one GiB and as GiB above.
func FormatBytes(b int64) string {
	const mib, gib = 1 << 20, 1 << 30
	if b >= gib || -b >= gib {
		return FormatNumber(float64(b)/gib) + "GiB"
	}
	return strconv.FormatInt(b/mib, 10) + "MiB"
}

// byteUnits are the units ParseBytes takes, longest suffix first so that
// "MiB" is not read as "B"; FormatSize writes the binary ones.
var byteUnits = []struct {
	suffix string
	factor float64
}{
	{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// ParseBytes reads a size: a number of bytes with an optional unit, binary
// (KiB, MiB, GiB, TiB, PiB) or decimal (KB, MB, GB, TB, PB), such as 300MiB,
// 1.5GiB or 17179869184. Every command and file that takes a size reads it
// here.
func ParseBytes(s string) (int64, error) {
	text, factor := strings.TrimSpace(s), 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(text, u.suffix); ok {
			text, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v*factor >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size such as 300MiB, 16GiB or a number of bytes", s)
	}
	return int64(v * factor), nil
}

// FormatSize writes a byte count in the largest binary unit that holds it
// whole, so a limit reads as it was given and ParseBytes reads it back:
// 64MiB, 2GiB, 1536KiB; a count no unit divides is written in bytes with
// a B.
func FormatSize(b int64) string {
	for _, u := range byteUnits[:5] {
		f := int64(u.factor)
		if b != 0 && b%f == 0 {
			return strconv.FormatInt(b/f, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}

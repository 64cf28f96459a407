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

// sizeUnits are the units ParseSize reads and FormatSize writes, largest
// first: binary ones, and the decimal ones people also type.
var sizeUnits = []struct {
	suffix string
	factor float64
}{
	{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// ParseSize reads a number of bytes with an optional unit: 1048576, 64MiB,
// 2GiB, 1.5GiB, 500MB (binary units are powers of 1024, decimal ones of
// 1000; any case, a space allowed before the unit). The result is whole
// bytes, rounded down.
func ParseSize(s string) (int64, error) {
	text, factor := strings.TrimSpace(s), 1.0
	for _, u := range sizeUnits {
		if len(text) > len(u.suffix) && strings.EqualFold(text[len(text)-len(u.suffix):], u.suffix) {
			text, factor = strings.TrimSpace(text[:len(text)-len(u.suffix)]), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v*factor >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size such as 512MiB, 2GiB or 1048576 (bytes)", s)
	}
	return int64(v * factor), nil
}

// FormatSize writes a byte count in the largest binary unit that holds it
// whole, so a limit reads as it was given: 64MiB, 2GiB, 1536KiB; a count
// no unit divides is written in bytes with a B.
func FormatSize(b int64) string {
	for _, u := range sizeUnits[:5] {
		f := int64(u.factor)
		if b != 0 && b%f == 0 {
			return strconv.FormatInt(b/f, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}

package engine

import (
	"math"
	"strconv"
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

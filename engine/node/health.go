package node

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// HealthReading is what a node reports of its machine for the overload
// gate and the lowerweight selector.
type HealthReading struct {
	LoadAvg      float64 // one-minute load average
	MemAvailable int64   // bytes; 0 when unknown
}

// ReadHealth reads /proc; on systems without it the figures stay zero,
// which the placement rules treat as unknown.
func ReadHealth() HealthReading { return ReadHealthFrom("/proc/loadavg") }

// ReadHealthFrom is ReadHealth with the load average read from loadavg, a
// file in the format of /proc/loadavg: a container's view of its own load
// (lxcfs), or a figure a test sets.
func ReadHealthFrom(loadavg string) HealthReading {
	var h HealthReading
	if b, err := os.ReadFile(loadavg); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			h.LoadAvg, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					h.MemAvailable = kb << 10
				}
				break
			}
		}
	}
	return h
}

package node

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// health is what a node reports of its machine for the overload filters
// and the lowerweight selector.
type health struct {
	loadAvg      float64
	memAvailable int64 // bytes; 0 when unknown
}

// readHealth reads /proc; on systems without it the figures stay zero,
// which the placement rules treat as unknown.
func readHealth() health {
	var h health
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			h.loadAvg, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					h.memAvailable = kb << 10
				}
				break
			}
		}
	}
	return h
}

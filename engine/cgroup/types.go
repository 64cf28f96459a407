package cgroup

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Options say what a node wants of its cgroups.
type Options struct {
	// Name is the node's name; its directory is jobctl-PID-N-NAME.
	Name string
	// Limits: hold runs to a CPU share from their load and to their memory
	// limit (serve --enforce).
	Limits bool
}

// Support says what a node's cgroups measure and enforce.
type Support struct {
	Version     int  // 1 or 2
	CPU         bool // each run's CPU time is measured in its group
	Memory      bool // each run's peak memory is measured in its group
	CPUShare    bool // runs get CPU in proportion to their load
	MemoryLimit bool // runs are held to their memory limit
	NoSwap      bool // a run held to a memory limit cannot swap past it
	// Missing says what could not be had, and why, one clause each.
	Missing []string
}

// Limits are what a run's group holds it to.
type Limits struct {
	// Load is the run's declared load, which sets its CPU share; used only
	// when CPUShare is true.
	Load     float64
	CPUShare bool
	// Memory is the most memory the run may hold, in bytes; 0: no limit.
	Memory int64
}

// Sample is what a group's run has used so far.
type Sample struct {
	// CPU is the CPU time (user + system) of every process that was in
	// the group; HasCPU is false when the group does not measure it.
	CPU    time.Duration
	HasCPU bool
	// Memory is the memory the group holds now, Peak the most it held;
	// HasMemory is false when the group does not measure memory, HasPeak
	// when it measures it now but keeps no peak (v2 before Linux 5.19).
	Memory    int64
	Peak      int64
	HasMemory bool
	HasPeak   bool
	// OOMKills counts processes the kernel killed at the group's memory
	// limit; -1 when the kernel does not say (v1 before Linux 4.13), and
	// LimitHits then counts how often the group hit its limit.
	OOMKills  int64
	LimitHits int64
}

// cpuWeight is the cgroup v2 cpu.weight of a load: 100 a unit of load (the
// weight of a group no one set), between 1 and 10000.
func cpuWeight(load float64) int64 {
	return clampRound(load*100, 1, 10000)
}

// cpuShares is the cgroup v1 cpu.shares of a load: 1024 a unit of load,
// between 2 and 262144.
func cpuShares(load float64) int64 {
	return clampRound(load*1024, 2, 262144)
}

func clampRound(v float64, lo, hi int64) int64 {
	if math.IsNaN(v) {
		return lo
	}
	return int64(math.Max(float64(lo), math.Min(float64(hi), math.Round(v))))
}

// Describe is the line a node logs at its start: how it measures its runs,
// and with limits what it enforces and what it cannot.
func (s Support) Describe(limits bool) string {
	var b strings.Builder
	measured := []string{}
	if s.CPU {
		measured = append(measured, "CPU time")
	}
	if s.Memory {
		measured = append(measured, "peak memory")
	}
	fmt.Fprintf(&b, "each job runs in a cgroup (v%d) of its own, which measures %s", s.Version, strings.Join(measured, " and "))
	if !s.CPU || !s.Memory {
		b.WriteString("; the rest is the kernel's accounting of the processes a job reaps")
	}
	if limits {
		var can, cannot []string
		if s.CPUShare {
			can = append(can, "a CPU share from each job's load")
		} else {
			cannot = append(cannot, "CPU shares")
		}
		switch {
		case s.MemoryLimit && s.NoSwap:
			can = append(can, "memory limits (without swap)")
		case s.MemoryLimit:
			can = append(can, "memory limits (swap is not accounted, so a job may swap past its limit)")
		default:
			cannot = append(cannot, "memory limits")
		}
		if len(can) > 0 {
			b.WriteString("; enforcing " + strings.Join(can, " and "))
		}
		if len(cannot) > 0 {
			b.WriteString("; cannot enforce " + strings.Join(cannot, " or "))
		}
	}
	if len(s.Missing) > 0 {
		b.WriteString(" (" + strings.Join(s.Missing, "; ") + ")")
	}
	return b.String()
}

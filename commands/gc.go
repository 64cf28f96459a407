package commands

import (
	"os"
	"runtime/debug"
)

// serverGCPercent is the garbage collector's target for the commands that
// run the engine. A node working short jobs allocates for every job it reads
// and records; at Go's default of 100 the collector took a quarter of its
// CPU, which on a small machine is CPU the database does not get. The heap
// such a process keeps is small (tens of MiB with thousands of jobs
// running), so letting it grow to five times that before collecting costs
// little memory.
const serverGCPercent = 400

// tuneGCForServing sets serverGCPercent unless GOGC was given, which always
// wins.
func tuneGCForServing() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serverGCPercent)
	}
}

// simulateMemoryLimit is the soft memory limit of a simulation: it holds
// every live job of the workload in memory, and a run of a million jobs
// keeps a few hundred MiB of them. Under the limit the collector runs at
// serverGCPercent, which saves a fifth of the run's CPU; near it, it runs
// as often as it must.
const simulateMemoryLimit = 768 << 20

// tuneGCForSimulating is tuneGCForServing with simulateMemoryLimit, unless
// GOMEMLIMIT was given.
func tuneGCForSimulating() {
	tuneGCForServing()
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(simulateMemoryLimit)
	}
}

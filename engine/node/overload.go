package node

import (
	"github.com/jobctl/jobctl/engine"
)

// The overload gate keeps work away from a node whose machine is busy or
// short of memory, whatever its own books say. It is decided by the
// dispatchers from the figures the node reports, so a node held back by it
// would otherwise see no offers and no reason: these log why, once per
// change. A load average above the limit only shifts work to calmer nodes
// (placement.Filter); free memory under the reserve holds it back.

// logOverloadLimits says at startup which limits the gate holds this node to.
func (l *liveness) logOverloadLimits() {
	loadAvg := "off"
	if l.maxLoadAvg > 0 {
		loadAvg = engine.FormatNumber(l.maxLoadAvg)
	}
	reserve := "off"
	if l.reservedMemory > 0 {
		reserve = engine.FormatBytes(l.reservedMemory)
	}
	l.log.Info("overload gate", "max_load_avg", loadAvg, "reserved_memory", reserve)
}

// noteOverload judges a health reading against this node's limits the way
// dispatchers do, and logs when the node becomes overloaded, when the cause
// changes and when it recovers; readings that change nothing log nothing.
func (l *liveness) noteOverload(h HealthReading) {
	me := engine.Node{MaxLoadAvg: l.maxLoadAvg, ReservedMemory: l.reservedMemory,
		LoadAvg: h.LoadAvg, MemAvailable: h.MemAvailable}
	now := me.Overloaded()
	l.mu.Lock()
	was := l.overload
	l.overload = now
	l.mu.Unlock()
	l.overloaded.Set(boolGauge(now.Kind != ""))
	if now.Kind == was.Kind {
		return
	}
	switch now.Kind {
	case engine.OverloadLoadAvg:
		l.log.Warn("load average " + engine.FormatNumber(h.LoadAvg) + " is above --max-load-avg " +
			engine.FormatNumber(l.maxLoadAvg) + ": this node gets new work only when no node under its limit can take it" +
			" ('--max-load-avg off' removes the limit)")
	case engine.OverloadLowMemory:
		l.log.Warn("taking no new work: free memory " + engine.FormatBytes(h.MemAvailable) + " is under --reserved-memory " +
			engine.FormatBytes(l.reservedMemory) + " (set it lower, or to 0 to remove the reserve)")
	default:
		l.log.Info("no longer overloaded: taking new work as usual", "load_avg", engine.FormatNumber(h.LoadAvg),
			"was", was.Reason)
	}
}

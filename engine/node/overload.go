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
func (n *Runtime) logOverloadLimits() {
	loadAvg := "off"
	if n.cfg.MaxLoadAvg > 0 {
		loadAvg = engine.FormatNumber(n.cfg.MaxLoadAvg)
	}
	reserve := "off"
	if n.cfg.ReservedMemory > 0 {
		reserve = engine.FormatBytes(n.cfg.ReservedMemory)
	}
	n.log.Info("overload gate", "max_load_avg", loadAvg, "reserved_memory", reserve)
}

// noteOverload judges a health reading against this node's limits the way
// dispatchers do, and logs when the node becomes overloaded, when the cause
// changes and when it recovers; readings that change nothing log nothing.
func (n *Runtime) noteOverload(h HealthReading) {
	me := engine.Node{MaxLoadAvg: n.cfg.MaxLoadAvg, ReservedMemory: n.cfg.ReservedMemory,
		LoadAvg: h.LoadAvg, MemAvailable: h.MemAvailable}
	now := me.Overloaded()
	n.mu.Lock()
	was := n.overload
	n.overload = now
	n.mu.Unlock()
	n.metrics.overloaded.Set(boolGauge(now.Kind != ""))
	if now.Kind == was.Kind {
		return
	}
	switch now.Kind {
	case engine.OverloadLoadAvg:
		n.log.Warn("load average " + engine.FormatNumber(h.LoadAvg) + " is above --max-load-avg " +
			engine.FormatNumber(n.cfg.MaxLoadAvg) + ": this node gets new work only when no node under its limit can take it" +
			" ('--max-load-avg off' removes the limit)")
	case engine.OverloadLowMemory:
		n.log.Warn("taking no new work: free memory " + engine.FormatBytes(h.MemAvailable) + " is under --reserved-memory " +
			engine.FormatBytes(n.cfg.ReservedMemory) + " (set it lower, or to 0 to remove the reserve)")
	default:
		n.log.Info("no longer overloaded: taking new work as usual", "load_avg", engine.FormatNumber(h.LoadAvg),
			"was", was.Reason)
	}
}

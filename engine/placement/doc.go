// Package placement decides where a job may run and in which order the
// candidate nodes are tried, and how a node answers an offer.
//
// It is pure: no store, no network, no clock of its own. The dispatcher, the
// node endpoint, `jobctl explain` and `jobctl simulate` all call the same
// functions with the nodes and time they have, so an operator's explanation
// and the simulator's results are exactly what the dispatcher does.
//
// The parts:
//
//   - Filter turns every node into a Verdict for one job (state, type,
//     health, size, reservation, headroom) and returns the eligible ones;
//     Placement.NeverRunnable says when no node could ever take the job and
//     Placement.Keep which node an oversized job waits for.
//   - A Selector orders the eligible nodes, best first: LoadFactor (the
//     default), Random, RoundRobin or LowerWeight, optionally wrapped in
//     Preferred. Weights ramp up after a node starts (EffectiveWeight).
//   - Accept is the node's own check when a job is offered to it.
package placement

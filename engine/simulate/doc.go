// Package simulate replays a workload on a virtual cluster to compare
// placement strategies before changing a real one. It runs the engine's own
// code: the dispatcher and its selectors, the nodes' acceptance books, the
// job transitions of the handshake and of a run's end, on the in-memory
// store with a virtual clock, so what it reports is what the engine would
// do, without a second copy of any rule.
//
// The clock jumps over stretches in which nothing can change, so a day of
// cluster time takes as long as the rounds in it that have work to do.
package simulate

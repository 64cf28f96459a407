// Package engine holds jobctl's domain: jobs and their states, nodes, the
// dispatch lease, and the Store interface every other part is written against.
//
// The runtime pieces live in sub-packages (placement, runner, node, dispatch,
// dbstore); they share only the types defined here, so the simulator and the
// tests can drive the very same code with another store and a fixed clock.
package engine

// Package node is the runtime of `jobctl serve`: it registers the node,
// keeps its acceptance books, answers dispatch offers (from its endpoint
// and, in-process, from its own dispatcher), starts accepted jobs through
// the runner and records how they end, follows operator requests (cancel,
// pause, resume) from the store, reports its liveness and health, and — on
// dispatch candidates — runs the lease election, the dispatch loop and the
// heartbeats.
//
// Runtime wires the node's parts, each a type of its own with its state and
// goroutines: the runner (jobRunner) answers offers and runs the jobs, the
// job API (jobAPI) answers their processes, the result recorder
// (resultRecorder) records how they end, liveness and the fence keep the
// node's record alive and its runs within its node lease, and the lease
// services (leaseServices) run what a dispatch candidate runs.
//
// The HTTP side of the endpoint lives in package endpoint; the rules for a
// job's next state live in package engine. This package ties them to a
// store, a clock and running processes.
package node

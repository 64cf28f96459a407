// Package node is the runtime of `jobctl serve`: it registers the node,
// answers the dispatch handshake over HTTP (and in-process for its own
// dispatcher), runs accepted jobs through the runner, follows operator
// requests (cancel, pause, resume) from the store, and — on candidates —
// runs the lease election, the dispatch loop and the heartbeat.
package node

// Package dispatch is the lease-holder side of jobctl: the election through
// the lease row (LeaseHolder), the dispatch round that places each job on a
// node that can carry its load (Dispatcher), and the heartbeat that marks
// silent nodes OFFLINE (Monitor). It talks to nodes only through an Offerer,
// so the simulator and tests can drive it without HTTP.
package dispatch

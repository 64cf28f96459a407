// Package dispatch is the lease-holder side of jobctl: the election through
// the lease row (LeaseHolder), the dispatch round that places each job on a
// node that can carry its load (Dispatcher), and the heartbeat that marks
// unreachable nodes OFFLINE for placement (Monitor). It talks to nodes only
// through an Offerer, so the simulator and tests can drive it without HTTP.
//
// A round works under the lease term its holder holds (SetLease): every
// offer carries it, and a node starts a job only while that term is the
// current lease, so an offer of a holder that lost the lease never runs.
//
// A round recovers the jobs of nodes silent past their node lease and a
// margin (recoverSilentNodes), creates the rollback job of each job that
// failed finally with a rollback spec (engine.SpawnRollbacks, once per job
// even across holders), places the jobs that keep a node first, then pages through the queue
// (RESTART before QUEUED, workflow steps last) a page at a time: each page is
// planned in memory and offered to each node as one batch (place.go), and
// the round stops reading once no node has room. A node that accepts a job
// starts it with one transition guarded by the status and version the round
// read, which is also its claim; the dispatcher's own node (LocalOfferer)
// answers in-process. Which nodes may take a job
// and which node an oversized job waits for are placement's decisions; the
// round records the kept nodes in the store, so a new lease holder honours
// them. A type with a limit (engine.TypeLimit) gets no more jobs in a round
// than its limit leaves beside the jobs of it running when the round began,
// read from the store with the limits (typelimits.go), so a new lease holder
// obeys it too. Every job no node took is counted by why it waits
// (RoundStats), and the round logs a summary of it, so dispatch never stops
// silently.
//
// Explain judges one job with the same code, for `jobctl explain`.
package dispatch

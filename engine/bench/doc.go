// Package bench measures the engine's throughput and latency on a real
// database: it submits noop jobs, has real nodes (engine/node, talking over
// real HTTP as remote nodes do) or the running cluster work them, and
// reports jobs per second and the submit-to-start latency from the jobs'
// own timestamps, on the database's clock.
//
// Two workloads: a burn-down inserts N jobs in bulk first and then times the
// nodes working through them; a run of a fixed duration inserts and works at
// once, at a fixed offered rate or as fast as the insert loop goes with a
// bounded backlog.
//
// Every job the benchmark creates carries one creator name of its own, so it
// finds, cancels and removes exactly its own jobs afterwards, whether the run
// ends, fails or is interrupted; the nodes it started are removed too.
package bench

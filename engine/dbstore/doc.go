// Package dbstore is jobctl's SQL store: the one implementation of
// engine.Store, for SQLite (the zero-setup default, one file), PostgreSQL
// (the multi-machine store) and MySQL/MariaDB.
//
// The SQL itself lives in the sql package as embedded .sql files; this
// package binds them. What differs between the backends — the clock
// expression, how a new id comes back, how migrations are serialised — is
// gathered in one dialect value per backend (dialect.go).
//
// Every timestamp the store sets comes from the database's clock, never the
// caller's, so nodes with skewed clocks still agree on leases and run_after.
//
// # Connections
//
// A Store holds a bounded number of connections, so a cluster of N nodes
// needs at most N times that many from the server:
//
//   - the main pool, for every query: 4 connections on SQLite, where
//     writers take turns on the file's one write lock and more would only
//     queue there; 8 on PostgreSQL and MySQL;
//   - one more for the lease, opened on the first lease call, so a renewal
//     never waits behind a main pool that job work has exhausted;
//   - on PostgreSQL one more for JobChanges, opened on its first call: the
//     listening connection for job change notifications.
//
// So a node on PostgreSQL uses at most 8 + 1 + 1 = 10 connections, and a
// command such as jobctl list at most 8 (in practice one or two). The DSN
// parameter pool_max_conns=N sets the main pool's size on PostgreSQL and
// MySQL (1 to 1000), for a server that allows fewer connections or a node
// that wants more; jobctl takes it out before the driver sees the DSN.
//
// # Wake-ups
//
// The Store is an engine.JobChangeNotifier. Every write of a job through it
// that may let the dispatcher place more work (engine.WakingStatuses)
// signals its process's subscribers once the write has committed. On
// PostgreSQL, migration 003's trigger also notifies the channel
// jobctl_job_changes, so a node hears of a job submitted or finished by any
// other process at once. LISTEN does not pass through a transaction-pooling
// proxy; polling at the dispatch interval stays the correct fallback.
package dbstore

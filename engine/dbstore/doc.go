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

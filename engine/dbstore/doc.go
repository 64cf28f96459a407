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
// A Store holds at most its connection budget, all pools together, so a
// cluster of N nodes needs at most N times that many from the server. The
// budget is DefaultMaxConns (6) unless the DSN parameter pool_max_conns=N
// (PostgreSQL and MySQL, taken out before the driver sees the DSN) or
// OpenOptions.MaxConns (serve --db-max-conns) says otherwise, from
// MinMaxConns (3) to MaxMaxConns (1000). It is shared out as:
//
//   - the control connection, opened when first needed (control.go): a
//     node's liveness writes and the lease's statements and nothing else,
//     while the main pool is full, so they never wait for a connection
//     behind job work; while the pool has room they take a connection
//     there. On SQLite they always take it, and their writes go ahead of
//     every write queued in the process (writeTurn);
//   - on PostgreSQL, unless reached through a transaction pooler, the
//     listening connection for job change notifications, open only while
//     JobChanges has a subscriber (the lease holder's dispatch loop);
//   - the main pool, for everything else, with what the two leave. A
//     connection unused for 5 seconds is closed, so a process that has
//     little to do soon holds few; a node sets how many it keeps unused,
//     and how long (SetIdleConns), by its part in the cluster and what its
//     pool did (ConnStats).
//
// PostgreSQL knows each connection by application_name, which OpenOptions
// sets (the command, or "jobctl serve NODE") unless the DSN does.
//
// # Transaction poolers
//
// With the DSN parameter pooler=transaction, the Store expects a
// PostgreSQL server behind a pooler that hands out a server connection per
// transaction (PgBouncer's pool_mode=transaction), and relies on no state
// of a server session: statements travel as one exchange each
// (binary_parameters=yes, required), migrations lock with a transaction's
// advisory lock (as they always do), there is no LISTEN, and a DSN that
// sets search_path or options at connection start is refused. Such a DSN
// needs a database of its own for the cluster.
//
// # Wake-ups
//
// The Store is an engine.JobChangeNotifier. Every write of a job through it
// that may let the dispatcher place more work (engine.WakingStatuses)
// signals its process's subscribers once the write has committed. On
// PostgreSQL, each such statement also notifies the channel
// jobctl_job_changes itself (sql/queries/postgres/jobs_changed_notify.sql),
// so a node hears of a job submitted or finished by any other process at
// once; a write made by hand in SQL wakes no one until the next poll.
// LISTEN does not pass through a transaction-pooling proxy; polling at the
// dispatch interval stays the correct fallback.
package dbstore

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
package dbstore

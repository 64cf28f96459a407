package dbstore

import (
	"fmt"
	"time"
)

// dialect is everything that differs between the database backends. The
// queries themselves are shared .sql files; a dialect only fills in the
// fragments that differ (the clock) and says how a few statements behave.
type dialect struct {
	name   string // as engine.Store.Dialect reports it, and the sql/ folder name
	driver string // database/sql driver name

	// now is the SQL expression of the database's clock: UTC, sub-second,
	// the time of the statement, not of its transaction.
	now string
	// nowPlus returns the SQL expression now + seconds, where seconds is a
	// bound parameter holding a float. Durations travel as seconds because
	// not every driver can bind a time.Duration.
	nowPlus func(seconds string) string
	// timeArg is how a Go time is bound so it compares correctly with now.
	timeArg func(time.Time) any
	// timeStep is the precision of stored timestamps. A bound compared
	// with them is first moved onto this grid (see windowArg), so no
	// driver or server rounding of the finer Go time changes the result.
	timeStep time.Duration

	// insertReturnsID: INSERT … RETURNING id gives the new id; otherwise
	// the driver's LastInsertId does.
	insertReturnsID bool
	// insertInWith: a WITH clause may hold an INSERT (a data-modifying
	// common table expression), so job_submit inserts a job and its event
	// in one statement; otherwise the store records the event in a second,
	// in one transaction.
	insertInWith bool
	// oneWriter: the database takes one write at a time, so the process's
	// own writes queue for it in Go (Store.writing). A writer SQLite finds
	// busy sleeps in steps (1, 2, 5, 10 … ms) before it looks again, well
	// past the moment the lock is free: a node recording results beside a
	// dispatcher starting jobs lost more time asleep than writing.
	// busy_timeout still covers writers of other processes.
	oneWriter bool
	// sendsArrays: the dialect takes arrays as parameters, one per column.
	// JobInsertMany sends each chunk so to job_insert_arrays instead of a
	// multi-row VALUES list; a chunk of starts alone goes to
	// job_start_many, with the arrays a start fills, and a chunk of ends of
	// runs read back quietly to job_end_many. The ids those statements and
	// job_update_many_ids return come back as one array (selectInt64s).
	sendsArrays bool
	// updateReturns: UPDATE … RETURNING gives the changed rows, so a batch
	// of transitions is one statement; otherwise the batch locks its rows,
	// updates and reads them back in one transaction.
	updateReturns bool
	// migrationLock: Migrate holds the migrate_lock query's lock, a
	// session's, around its work on one connection.
	// migrationTxLock: each of Migrate's transactions takes the
	// migrate_tx_lock query's lock first, which the transaction's end
	// releases: no session state, so it holds behind a transaction pooler.
	// With neither, each migration's transaction must itself exclude other
	// writers (SQLite's BEGIN IMMEDIATE).
	migrationLock   bool
	migrationTxLock bool
	// notifiesJobChanges: every job change that may wake the dispatcher
	// sends a notification (an update through the trigger of migration 004,
	// an insert in its own statement), and JobChanges listens for it, so
	// changes made by other processes are reported too.
	notifiesJobChanges bool

	// binaryCollation follows a text column in an ORDER BY so that it
	// sorts byte by byte, as Go compares strings: "" where the column's
	// own collation does already (SQLite's BINARY, MySQL's utf8mb4_bin).
	binaryCollation string

	// pageInIndexOrder, where set, runs before the dispatch page's query
	// in its transaction, so the planner reads the page in index order,
	// and without compiling it first. The planner's estimate of a long
	// queue passes jit_above_cost once the table is large, and compiling
	// took 7 to 30 ms a page, several times the read itself.
	pageInIndexOrder string
	// purgeByIndex, where set, runs first in every purge transaction, so
	// each of its statements walks the index made for it (the ended jobs
	// in order of their end, the primary keys, the parents). A table that
	// bulk writes filled since its statistics were last taken (autovacuum
	// may be minutes behind, and on a busy server never gets there)
	// misleads the planner into reading every ended job, or the whole
	// table, per batch: a second and more per 1000 jobs of a million,
	// where the indexes take milliseconds. Like a page, a purge batch is
	// not worth compiling.
	purgeByIndex string
	// deleteReturns: DELETE … RETURNING gives the deleted rows.
	deleteReturns bool
	// setsAsComparisons: the partial indexes of ended jobs state their
	// statuses as comparisons joined by OR, and the index of live keys
	// the statuses it leaves out as comparisons joined by AND, not as IN
	// lists, and the queries that read them say so alike ({{statusOneOf}},
	// {{statusNoneOf}}). SQLite evaluates a partial index's IN list of more
	// than two values by building a temporary index for every row a write
	// changes (migrations 018 and 022).
	setsAsComparisons bool
	// liveIndexesApart: the indexes of live jobs hold the queue statuses
	// (jobs_queue) apart from the other live ones (jobs_status_node),
	// so a statement over live statuses of both kinds reads the whole
	// table; a count or a listing of such statuses reads each kind in a
	// statement of its own, both in one snapshot (liveParts). SQLite and
	// MySQL index every status in one.
	liveIndexesApart bool
}

// sqliteTimeLayout is the text form of SQLite timestamps: the form
// datetime('now', 'subsec') produces, UTC with milliseconds. Every stored
// and bound time has exactly this width, so text comparison is time order.
const sqliteTimeLayout = "2006-01-02 15:04:05.000"

var sqliteDialect = &dialect{
	name:   "sqlite",
	driver: "sqlite",
	now:    "datetime('now', 'subsec')",
	nowPlus: func(seconds string) string {
		// SQLite's 'now' is fixed for the whole statement, so now and now
		// plus an offset agree within one statement.
		return fmt.Sprintf("datetime('now', printf('%%+.3f seconds', %s), 'subsec')", seconds)
	},
	timeArg:  func(t time.Time) any { return t.UTC().Format(sqliteTimeLayout) },
	timeStep: time.Millisecond,
	// RETURNING needs SQLite 3.35; the embedded one is newer.
	insertReturnsID: true,
	updateReturns:   true,
	deleteReturns:   true,
	migrationLock:   false,
	// Migration 018.
	setsAsComparisons: true,
	// WAL lets readers run beside the one writer; writers take turns in
	// Go (Store.writing), so more connections only let reads go on beside
	// a write.
	oneWriter: true,
}

// postgresIndexWalk is what a PostgreSQL transaction that walks an index
// in order tells the planner first (dialect.pageInIndexOrder,
// dialect.purgeByIndex): no bitmap, no sequential scan, no compiling.
const postgresIndexWalk = "SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off; SET LOCAL jit = off"

var postgresDialect = &dialect{
	name:   "postgres",
	driver: "postgres",
	// clock_timestamp(), not now(): now() is the start of the transaction.
	now: "clock_timestamp()",
	nowPlus: func(seconds string) string {
		return fmt.Sprintf("(clock_timestamp() + make_interval(secs => %s))", seconds)
	},
	timeArg:            func(t time.Time) any { return t.UTC() },
	timeStep:           time.Microsecond,
	insertReturnsID:    true,
	sendsArrays:        true,
	updateReturns:      true,
	deleteReturns:      true,
	insertInWith:       true,
	migrationTxLock:    true,
	notifiesJobChanges: true,
	binaryCollation:    ` COLLATE "C"`,
	pageInIndexOrder:   postgresIndexWalk,
	purgeByIndex:       postgresIndexWalk,
	liveIndexesApart:   true,
}

var mysqlDialect = &dialect{
	name:   "mysql",
	driver: "mysql",
	// DATETIME columns hold UTC; UTC_TIMESTAMP is the statement's time.
	now: "UTC_TIMESTAMP(6)",
	nowPlus: func(seconds string) string {
		return fmt.Sprintf("TIMESTAMPADD(MICROSECOND, ROUND(%s * 1000000), UTC_TIMESTAMP(6))", seconds)
	},
	// The driver writes times in its Loc, which Open sets to UTC.
	timeArg:         func(t time.Time) any { return t.UTC() },
	timeStep:        time.Microsecond, // DATETIME(6)
	insertReturnsID: false,
	updateReturns:   false,
	migrationLock:   true,
}

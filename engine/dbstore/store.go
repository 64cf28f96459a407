package dbstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"    // also the database/sql driver "postgres"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
	// The "mysql" driver registers through dsn.go's import of its config.

	"github.com/jobctl/jobctl/engine"
)

// Store is the SQL implementation of engine.Store for every supported
// backend. It is safe for concurrent use.
type Store struct {
	*conn
	// q runs the queries: the pool, or the transaction of a Store given to
	// a Tx callback (then tx is that transaction).
	q  querier
	tx *sqlx.Tx
	// txWakes collects, in a transaction of Tx, whether a change must be
	// reported once it commits (see wake).
	txWakes *atomic.Bool
}

// conn is what a Store and the transactions it starts share.
type conn struct {
	db       *sqlx.DB
	dialect  *dialect
	queries  map[string]*boundQuery
	location string

	// writes hands the turn to write to this process's writes one at a
	// time, where the dialect takes one writer at a time
	// (dialect.oneWriter).
	writes writeTurn

	// The control connection: a pool of one, of its own, for a node's
	// liveness writes and the lease's statements (control.go), so that
	// neither ever waits for a connection behind job work.
	driverDSN   string
	controlOnce sync.Once
	controlDB   *sqlx.DB
	controlErr  error

	// Jobs this process inserted in bulk, and the count at which the
	// statistics are refreshed next (analyzeDue).
	bulkInserted, nextAnalyze atomic.Int64

	// Job changes for JobChanges: this process's own, and on PostgreSQL
	// those of every process, through a listener (notify.go) unless the
	// server is reached through a transaction pooler (pooled).
	changes  engine.JobChangeFeed
	listener changeListener
	pooled   bool
	// maxConns is the process's connection budget, all pools together.
	maxConns int

	// kept are keptQueries, by query text, prepared on the main pool once
	// a batch first needs them (keepStatements).
	keptMu sync.Mutex
	kept   map[string]*sqlx.Stmt
}

var _ engine.Store = (*Store)(nil)

// Open connects to the database named by dsn: "sqlite:PATH" ("sqlite:"
// alone for DefaultPath), "postgres://…", "postgresql://…" or "mysql://…"
// (MySQL 8.0.13+ or MariaDB 10.2+). For SQLite it creates the file and its
// directory when missing, private to the user. It checks that the database
// answers but does not migrate it: call Migrate. A dsn that cannot be
// parsed is an *engine.InvalidError.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, OpenOptions{})
}

// OpenOptions are the choices of OpenWith.
type OpenOptions struct {
	// MustExist refuses to create an SQLite file: a missing one is a
	// *NoDatabaseError, and no file or directory is made.
	MustExist bool
	// Warn is told, as one line, of a database file that was found
	// readable by other users and made private. Nil: stderr.
	Warn func(msg string)
	// MaxConns is the most connections the Store holds, all pools
	// together, from MinMaxConns to MaxMaxConns; 0: the DSN's
	// pool_max_conns, else DefaultMaxConns.
	MaxConns int
	// AppName names this process to a PostgreSQL server
	// (application_name, as pg_stat_activity shows it), unless the DSN
	// names one.
	AppName string
	// driver, where set, is the database/sql driver the main pool connects
	// with in place of the dialect's own: one that wraps it, so a test can
	// count the statements the store sends.
	driver string
}

// idleConnTime is how long a connection of the main pool may stay unused
// before it is closed, until SetIdleConns says otherwise: long enough
// that a dispatcher's rounds, every dispatch interval, keep theirs, short
// enough that a process left idle soon holds no more than it needs.
const idleConnTime = 5 * time.Second

// SetIdleConns sets how many connections of the main pool may stay open
// unused, each for at most d; a connection handed back beyond that is
// closed at once. A node sets them by its part in the cluster: few while
// it does not hold the lease, so that many nodes hold about a connection
// each, idle or at work. n is bounded by the pool's size. On SQLite, where a
// connection costs no server anything, the pool keeps every connection it
// has, for at most d.
func (s *Store) SetIdleConns(n int, d time.Duration) {
	if !s.dialect.oneWriter {
		s.db.SetMaxIdleConns(n)
	}
	s.db.SetConnMaxIdleTime(d)
}

// ConnStats is what the main pool holds and has done (database/sql's
// figures): a node sizes the pool by it.
func (s *Store) ConnStats() sql.DBStats { return s.db.Stats() }

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, o OpenOptions) (*Store, error) {
	t, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	queries, err := dialectQueries(t.dialect)
	if err != nil {
		return nil, err
	}
	if t.sqlitePath != "" {
		warn := o.Warn
		if warn == nil {
			warn = func(msg string) { fmt.Fprintf(os.Stderr, "jobctl: warning: %s\n", msg) }
		}
		if err := prepareSQLiteFile(t.sqlitePath, !o.MustExist, warn); err != nil {
			var missing *NoDatabaseError
			if errors.As(err, &missing) {
				return nil, err
			}
			return nil, fmt.Errorf("cannot open sqlite database %s: %w", t.sqlitePath, err)
		}
	}
	maxConns := t.maxConns
	if o.MaxConns != 0 {
		if o.MaxConns < MinMaxConns || o.MaxConns > MaxMaxConns {
			return nil, &engine.InvalidError{What: "connection budget", Problems: []string{fmt.Sprintf(
				"%d connections: give a whole number from %d to %d", o.MaxConns, MinMaxConns, MaxMaxConns)}}
		}
		maxConns = o.MaxConns
	}
	if o.AppName != "" && t.dialect == postgresDialect {
		t.driverDSN = withDefaultParam(t.driverDSN, "application_name", o.AppName)
	}
	driverName := t.dialect.driver
	if o.driver != "" {
		driverName = o.driver
	}
	sqlDB, err := sql.Open(driverName, t.driverDSN)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s database %s: %w", t.dialect.name, t.display, err)
	}
	// Bound the dialect's way whichever driver connects.
	db := sqlx.NewDb(sqlDB, t.dialect.driver)
	s := &Store{conn: &conn{db: db, dialect: t.dialect, queries: queries, location: t.display,
		driverDSN: t.driverDSN, pooled: t.pooled, maxConns: maxConns}, q: db}
	// The main pool has what the control connection and the listener
	// leave of the budget, whether or not they are open: a command never
	// opens them, but its pool does not need the room either.
	mainConns := maxConns - 1
	if s.listens() {
		mainConns--
	}
	db.SetMaxOpenConns(mainConns)
	db.SetMaxIdleConns(mainConns)
	db.SetConnMaxIdleTime(idleConnTime)
	if err := ping(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("cannot connect to %s database %s: %w", t.dialect.name, t.display, err)
	}
	return s, nil
}

// withDefaultParam sets a URL parameter of dsn unless dsn has it.
func withDefaultParam(dsn, name, value string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // parseDSN built it; it parses
	}
	q := u.Query()
	if q.Has(name) {
		return dsn
	}
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// MaxConns is the most connections the Store holds to the database, all
// pools together.
func (s *Store) MaxConns() int { return s.maxConns }

// Close closes the database connections.
func (s *Store) Close() error {
	err := errors.Join(s.listener.close(), s.db.Close())
	if s.controlDB != nil {
		err = errors.Join(err, s.controlDB.Close())
	}
	return err
}

// Location names the database for people: the SQLite DSN with its path, or
// the server URL without password or parameters.
func (s *Store) Location() string { return s.location }

// Dialect names the backend: "sqlite", "postgres" or "mysql".
func (s *Store) Dialect() string { return s.dialect.name }

// Now is the database's clock, in UTC.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now dbTime
	if err := s.get(ctx, s.q, &now, qDBNow, nil); err != nil {
		return time.Time{}, fmt.Errorf("read database clock: %w", err)
	}
	return now.Time, nil
}

// querier is what the query helpers need: the pool, a transaction, or one
// dedicated connection.
type querier interface {
	sqlx.QueryerContext
	sqlx.ExecerContext
	Rebind(query string) string
}

// args are the named parameters of one query.
type args map[string]any

// bind gives the positional form of a named query and its values, from the
// query compiled at Open. With in, slice parameters expand for
// "x IN (:list)"; that form depends on the lengths, so it is built per call.
func (s *Store) bind(q querier, name string, arg args, in bool) (string, []any, error) {
	bq, ok := s.queries[name]
	if !ok {
		// loadQueries checks every name used here, so this is a bug.
		return "", nil, fmt.Errorf("no query %s for %s", name, s.dialect.name)
	}
	params, err := bq.values(arg)
	if err != nil {
		return "", nil, fmt.Errorf("query %s: %w", name, err)
	}
	if !in {
		return bq.text, params, nil
	}
	query, params, err := sqlx.In(bq.question, params...)
	if err != nil {
		return "", nil, fmt.Errorf("query %s: %w", name, err)
	}
	return q.Rebind(query), params, nil
}

// get runs a query that returns one row into dest.
func (s *Store) get(ctx context.Context, q querier, dest any, name string, arg args) error {
	query, params, err := s.bind(q, name, arg, false)
	if err != nil {
		return err
	}
	return sqlx.GetContext(ctx, q, dest, query, params...)
}

// selectRows runs a query that returns rows into the slice dest; in as for bind.
func (s *Store) selectRows(ctx context.Context, q querier, dest any, name string, arg args, in bool) error {
	query, params, err := s.bind(q, name, arg, in)
	if err != nil {
		return err
	}
	switch d := dest.(type) {
	case *[]*engine.Job:
		return selectJobs(ctx, q, d, query, params)
	case *[]int64:
		return selectInt64s(ctx, q, d, query, params)
	}
	return sqlx.SelectContext(ctx, q, dest, query, params...)
}

// exec runs a statement and returns how many rows it changed.
func (s *Store) exec(ctx context.Context, q querier, name string, arg args) (int64, error) {
	return s.execAs(ctx, q, name, arg, false)
}

// execUrgent is exec for a write that goes ahead of the queued ones
// (writing): one of the control connection's.
func (s *Store) execUrgent(ctx context.Context, q querier, name string, arg args) (int64, error) {
	return s.execAs(ctx, q, name, arg, true)
}

func (s *Store) execAs(ctx context.Context, q querier, name string, arg args, urgent bool) (int64, error) {
	query, params, err := s.bind(q, name, arg, false)
	if err != nil {
		return 0, err
	}
	switch q.(type) {
	case *sqlx.Tx, keptTx:
	default:
		defer s.writing(urgent)()
	}
	res, err := q.ExecContext(ctx, query, params...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// writing queues for the database's one writer where the dialect has one
// (dialect.oneWriter) and returns the release. An urgent write (liveness,
// the lease) goes next, ahead of every write queued before it. A write
// inside a transaction of this Store's needs no place: the transaction has
// it.
func (s *Store) writing(urgent bool) func() {
	if !s.dialect.oneWriter || s.tx != nil {
		return func() {}
	}
	s.writes.take(urgent)
	return s.writes.release
}

// inTx runs fn in a transaction and commits it if fn succeeds. On SQLite the
// transaction holds the write lock from its start (_txlock=immediate).
//
// A transaction the database aborted as a deadlock victim (InnoDB picks
// one even among single-row updates of the same job, through its secondary
// indexes) changed nothing and is run again, a few times at most.
//
// Inside a transaction (a Store given to a Tx callback) fn simply joins it.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	if s.tx != nil {
		return fn(s.tx)
	}
	return s.retryDeadlock(ctx, func() error { return s.tryTx(ctx, fn) })
}

// retryDeadlock runs fn, a transaction or a single statement, again when
// the database aborted it as a deadlock victim, a few times at most. Inside
// a transaction it runs fn once: the abort ends the enclosing transaction,
// whose own retry starts over.
func (s *Store) retryDeadlock(ctx context.Context, fn func() error) error {
	if s.tx != nil {
		return fn()
	}
	defer s.writing(false)()
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == 5 || !isDeadlock(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
	}
}

// Tx runs fn in one transaction; see engine.Store. A deadlock victim is run
// again, as inTx does for the store's own transactions.
func (s *Store) Tx(ctx context.Context, fn func(tx engine.TxStore) error) error {
	var wakes atomic.Bool
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		return fn(&Store{conn: s.conn, q: tx, tx: tx, txWakes: &wakes})
	})
	if err == nil && wakes.Load() {
		s.wake()
	}
	return err
}

func (s *Store) tryTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return runTx(ctx, s.db, fn)
}

// txBeginner is a pool or a single connection that starts transactions.
type txBeginner interface {
	BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error)
}

// runTx runs fn in one transaction: committed when fn succeeds, rolled back
// otherwise.
func runTx(ctx context.Context, b txBeginner, fn func(tx *sqlx.Tx) error) error {
	tx, err := b.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isDeadlock reports an error by which the database aborted a transaction
// to break a deadlock: MySQL 1213, PostgreSQL 40P01 and 40001.
func isDeadlock(err error) bool {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		return my.Number == 1213
	}
	var pg *pq.Error
	if errors.As(err, &pg) {
		return pg.Code == "40P01" || pg.Code == "40001"
	}
	return false
}

// noLimit stands for "all rows" where a query takes a LIMIT: every backend
// accepts a large number there, not all accept NULL or -1.
const noLimit = int64(1) << 62

func limitOrAll(n int) int64 {
	if n <= 0 {
		return noLimit
	}
	return int64(n)
}

func jobNotFound(id int64) error {
	return &engine.NotFoundError{What: "job", ID: strconv.FormatInt(id, 10)}
}

func nodeNotFound(name string) error {
	return &engine.NotFoundError{What: "node", ID: name}
}

// isNoRows reports a query that found no row.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// ping checks that the database answers. A fresh SQLite file that another
// process is creating and switching to WAL at the same moment answers
// SQLITE_BUSY while opening a connection, before any busy timeout applies:
// that is retried for as long as a busy timeout would wait.
func ping(ctx context.Context, db *sqlx.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		err := db.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// isBusy reports an SQLite "database is locked" error (SQLITE_BUSY and its
// extended codes).
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

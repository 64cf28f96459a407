package dbstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// keptQueries are the statements each dialect keeps prepared on every
// connection of the main pool. The set is small and fixed, so that the
// server's limit on prepared statements, for all its clients together
// (MySQL's max_prepared_stmt_count), stays far off.
//
// MySQL: the statements of a batch of transitions where UPDATE returns no
// rows (jobUpdateChunkLocked), which a node runs at every start and every
// result. go-sql-driver otherwise prepares, runs and closes each statement
// that has parameters, two round trips where a kept one takes one.
//
// PostgreSQL: the batched transitions, a node's starts and results. Sent
// on the unnamed statement, each batch is parsed and planned anew; kept,
// it is parsed once per connection and runs on the plan the server
// caches, which for these is the same plan: each row found by its id.
// Also the reads of every dispatch round that take no parameters (the
// queues, the nodes with their loads, the limits, the reservations): a
// statement without parameters has one plan, and planning these anew cost
// a third as much as running them when rounds come many a second. Not
// behind a transaction pooler, which may run a statement on another
// server connection than the one it was prepared on.
func (s *Store) keptQueries() []string {
	switch {
	case s.dialect == mysqlDialect:
		return mysqlKeptQueries
	case s.dialect == postgresDialect && !s.pooled:
		return postgresKeptQueries
	}
	return nil
}

var (
	mysqlKeptQueries    = []string{qJobUpdateManyLock, qJobUpdateMany, qJobUpdateManyRead, qJobUpdateManyReadStarted, qLeaseTermCurrent}
	postgresKeptQueries = []string{qJobStartMany, qJobEndMany, qJobUpdateMany, qJobUpdateManyIDs,
		qJobQueueLoads, qNodeList, qTypeLimitList, qReservationList}
)

// keepStatements prepares the keptQueries on the main pool, once per process.
// Preparing takes a connection of the pool, so it is done before a
// transaction takes one, never inside: the pool may have no other.
// Inside a transaction of Tx, or where the store keeps none, it does
// nothing.
func (s *Store) keepStatements(ctx context.Context) error {
	names := s.keptQueries()
	if s.tx != nil || len(names) == 0 {
		return nil
	}
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if s.kept != nil {
		return nil
	}
	kept := make(map[string]*sqlx.Stmt, len(names))
	for _, name := range names {
		text := s.queries[name].text
		st, err := s.db.PreparexContext(ctx, text)
		if err != nil {
			for _, st := range kept {
				_ = st.Close()
			}
			return fmt.Errorf("prepare %s: %w", name, err)
		}
		kept[text] = st
	}
	s.kept = kept
	return nil
}

// withKept is q running the kept statements as prepared on its connection,
// when q is the main pool or a transaction of it and they are prepared;
// else q.
func (s *Store) withKept(q querier) querier {
	s.keptMu.Lock()
	kept := s.kept
	s.keptMu.Unlock()
	if kept == nil {
		return q
	}
	switch q := q.(type) {
	case *sqlx.Tx:
		return keptTx{q, kept}
	case *sqlx.DB:
		return keptDB{q, kept}
	}
	return q
}

// keptTx is a transaction that runs the statements of kept, by query text,
// as prepared on its connection (database/sql prepares one there at its
// first use and keeps it until the statement or the connection closes),
// and every other query as the transaction does.
type keptTx struct {
	*sqlx.Tx
	kept map[string]*sqlx.Stmt
}

func (t keptTx) ExecContext(ctx context.Context, query string, params ...any) (sql.Result, error) {
	if st, ok := t.kept[query]; ok {
		return t.StmtxContext(ctx, st).ExecContext(ctx, params...)
	}
	return t.Tx.ExecContext(ctx, query, params...)
}

func (t keptTx) QueryContext(ctx context.Context, query string, params ...any) (*sql.Rows, error) {
	if st, ok := t.kept[query]; ok {
		return t.StmtxContext(ctx, st).QueryContext(ctx, params...)
	}
	return t.Tx.QueryContext(ctx, query, params...)
}

func (t keptTx) QueryxContext(ctx context.Context, query string, params ...any) (*sqlx.Rows, error) {
	if st, ok := t.kept[query]; ok {
		return t.StmtxContext(ctx, st).QueryxContext(ctx, params...)
	}
	return t.Tx.QueryxContext(ctx, query, params...)
}

func (t keptTx) QueryRowxContext(ctx context.Context, query string, params ...any) *sqlx.Row {
	if st, ok := t.kept[query]; ok {
		return t.StmtxContext(ctx, st).QueryRowxContext(ctx, params...)
	}
	return t.Tx.QueryRowxContext(ctx, query, params...)
}

// keptDB is the main pool running the statements of kept, by query text,
// as prepared on whichever connection it takes, and every other query as
// the pool does.
type keptDB struct {
	*sqlx.DB
	kept map[string]*sqlx.Stmt
}

func (d keptDB) ExecContext(ctx context.Context, query string, params ...any) (sql.Result, error) {
	if st, ok := d.kept[query]; ok {
		return st.ExecContext(ctx, params...)
	}
	return d.DB.ExecContext(ctx, query, params...)
}

func (d keptDB) QueryContext(ctx context.Context, query string, params ...any) (*sql.Rows, error) {
	if st, ok := d.kept[query]; ok {
		return st.QueryContext(ctx, params...)
	}
	return d.DB.QueryContext(ctx, query, params...)
}

func (d keptDB) QueryxContext(ctx context.Context, query string, params ...any) (*sqlx.Rows, error) {
	if st, ok := d.kept[query]; ok {
		return st.QueryxContext(ctx, params...)
	}
	return d.DB.QueryxContext(ctx, query, params...)
}

func (d keptDB) QueryRowxContext(ctx context.Context, query string, params ...any) *sqlx.Row {
	if st, ok := d.kept[query]; ok {
		return st.QueryRowxContext(ctx, params...)
	}
	return d.DB.QueryRowxContext(ctx, query, params...)
}

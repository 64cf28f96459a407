package dbstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// countingDriver wraps a database/sql driver and counts the statements its
// connections run and the transactions they begin, whichever way
// database/sql sends them (directly, or prepared and then executed).
type countingDriver struct {
	inner driver.Driver
	c     *statementCount
}

// statementCount is what a countingDriver saw, with the text of each
// statement for the failure message.
type statementCount struct {
	statements, transactions atomic.Int64
	mu                       sync.Mutex
	texts                    []string
	prepared                 []string // the statements prepared, whole
}

func (c *statementCount) statement(query string) {
	c.statements.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, firstLine(query))
}

func (c *statementCount) reset() {
	c.statements.Store(0)
	c.transactions.Store(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts, c.prepared = nil, nil
}

// preparations is how many times query was prepared.
func (c *statementCount) preparations(query string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.prepared {
		if p == query {
			n++
		}
	}
	return n
}

// firstLine is a statement's first line that is not a comment.
func firstLine(query string) string {
	for _, l := range strings.Split(query, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			return l
		}
	}
	return query
}

func (d countingDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingConn{inner: c, c: d.c}, nil
}

type countingConn struct {
	inner driver.Conn
	c     *statementCount
}

func (c *countingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.inner.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	c.c.mu.Lock()
	c.c.prepared = append(c.c.prepared, query)
	c.c.mu.Unlock()
	return &countingStmt{inner: st, query: query, c: c.c}, nil
}

func (c *countingConn) Close() error { return c.inner.Close() }

func (c *countingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.c.transactions.Add(1)
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.inner.Begin() //nolint:staticcheck // the driver's only way
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	if !errors.Is(err, driver.ErrSkip) {
		c.c.statement(query) // else database/sql prepares it, and the statement counts it
	}
	return res, err
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	if !errors.Is(err, driver.ErrSkip) {
		c.c.statement(query)
	}
	return rows, err
}

func (c *countingConn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *countingConn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

type countingStmt struct {
	inner driver.Stmt
	query string
	c     *statementCount
}

func (s *countingStmt) Close() error  { return s.inner.Close() }
func (s *countingStmt) NumInput() int { return s.inner.NumInput() }

func (s *countingStmt) Exec(args []driver.Value) (driver.Result, error) {
	s.c.statement(s.query)
	return s.inner.Exec(args) //nolint:staticcheck // the driver's only way
}

func (s *countingStmt) Query(args []driver.Value) (driver.Rows, error) {
	s.c.statement(s.query)
	return s.inner.Query(args) //nolint:staticcheck // the driver's only way
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.c.statement(s.query)
	if e, ok := s.inner.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	return nil, errors.New("counting driver: the statement has no ExecContext")
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.c.statement(s.query)
	if q, ok := s.inner.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return nil, errors.New("counting driver: the statement has no QueryContext")
}

func (s *countingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// countingDrivers registers, once, a counting wrapper of each dialect's
// driver as "counting-DRIVER", all counting into one count.
var (
	countingOnce  sync.Once
	countingTotal = &statementCount{}
)

func countingDriverName(t *testing.T, d *dialect) string {
	t.Helper()
	countingOnce.Do(func() {
		for _, d := range []*dialect{sqliteDialect, postgresDialect, mysqlDialect} {
			db, err := sql.Open(d.driver, "")
			if err != nil {
				panic(err)
			}
			sql.Register("counting-"+d.driver, countingDriver{inner: db.Driver(), c: countingTotal})
			_ = db.Close()
		}
	})
	return "counting-" + d.driver
}

// A plain `jobctl submit` costs the database one statement besides the
// schema check every command makes, and no transaction of its own, where
// the INSERT can carry the submit's event (PostgreSQL). SQLite records the
// event in a second statement, and MySQL, whose INSERT returns no rows,
// asks in a third what the nodes offer the type, each in one transaction.
// A child's submit reads its parent first, one statement more. The count
// is of what the store sends through a fresh process's pool, as the
// command's factory opens it: the schema check (SchemaCurrent) and the
// submit (engine.SubmitOne). Should it grow, the failure lists the
// statements.
func TestPlainSubmitStatements(t *testing.T) {
	backends := []struct {
		name                     string
		dsn                      func(t *testing.T) string
		statements, transactions int64
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "jobctl.db") }, 3, 1},
		{"postgres", func(t *testing.T) string { return postgresSchemaDSN(t) }, 2, 0},
		{"mysql", func(t *testing.T) string { return mysqlDatabaseDSN(t) }, 4, 1},
	}
	by := engine.Actor{Who: "me@host"}
	// The counts of the backends share one wrapper; run them one at a time.
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.dsn(t)
			setup := migrated(t, openStore(t, dsn))
			// A registered node offering the type, whose defaults apply.
			if _, err := engine.RegisterNode(ctx, setup, engine.NodeRegisterParams{Node: engine.Node{Name: "n1", MaxLoad: 4,
				Services: []engine.NodeService{{Type: "encode", Load: 2, Timeout: engine.Duration(time.Hour), Memory: 1 << 30}}},
				ProcessGone: func(engine.NodeProcess) bool { return false }}); err != nil {
				t.Fatal(err)
			}
			target, err := parseDSN(dsn)
			if err != nil {
				t.Fatal(err)
			}
			s, err := OpenWith(ctx, dsn, OpenOptions{driver: countingDriverName(t, target.dialect)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			count := func(what string, statements, transactions int64) {
				t.Helper()
				gotStatements, gotTransactions := countingTotal.statements.Load(), countingTotal.transactions.Load()
				countingTotal.mu.Lock()
				texts := strings.Join(countingTotal.texts, "\n  ")
				countingTotal.mu.Unlock()
				if gotStatements != statements || gotTransactions != transactions {
					t.Errorf("%s sent %d statements in %d transactions; want %d in %d:\n  %s",
						what, gotStatements, gotTransactions, statements, transactions, texts)
				}
				countingTotal.reset()
			}
			countingTotal.reset()

			current, err := s.SchemaCurrent(ctx)
			if err != nil || !current {
				t.Fatalf("SchemaCurrent = %v, %v; want true", current, err)
			}
			sub, err := engine.SubmitOne(ctx, s, nil, engine.SubmitRequest{Type: "encode", Creator: "me@host"}, by)
			if err != nil {
				t.Fatal(err)
			}
			count("a plain submit", b.statements, b.transactions)
			j, err := setup.JobGet(ctx, sub.ID)
			if err != nil || !sub.Offered || !sub.OnlineOffered || sub.LargestMaxLoad != 4 || sub.Load != 2 ||
				j.Load != 2 || time.Duration(j.Timeout) != time.Hour || j.MemoryLimit != 1<<30 || j.Priority != engine.DefaultPriority {
				t.Errorf("submitted %+v (%+v), %v; want load 2, timeout 1h and memory limit 1GiB from n1's service, the default priority",
					j, sub, err)
			}
			events, err := setup.EventList(ctx, engine.EventListParams{JobID: &sub.ID})
			if err != nil || len(events) != 1 || events[0].Who != by.Who || events[0].Verb != engine.EventSubmit {
				t.Errorf("the job's events: %+v, %v; want its submit by %s", events, err, by.Who)
			}

			// A child takes its parent's priority, read with the parent.
			parent, err := setup.JobInsert(ctx, engine.JobInsertParams{Type: "encode", Load: 1, Status: engine.StatusQueued, Priority: 80})
			if err != nil {
				t.Fatal(err)
			}
			countingTotal.reset()
			sub, err = engine.SubmitOne(ctx, s, nil, engine.SubmitRequest{Type: "encode", ParentID: &parent.ID}, by)
			if err != nil {
				t.Fatal(err)
			}
			count("a child's submit", b.statements, b.transactions)
			if j, err := setup.JobGet(ctx, sub.ID); err != nil || j.Priority != 80 || j.ParentID == nil || *j.ParentID != parent.ID {
				t.Errorf("child %+v, %v; want the parent's priority 80", j, err)
			}
		})
	}
}

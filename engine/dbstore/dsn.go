package dbstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-sql-driver/mysql"

	"github.com/jobctl/jobctl/engine"
)

// validForms is appended to every DSN error so the operator sees what works.
const validForms = "valid forms: sqlite:PATH (sqlite: alone for the default file), " +
	"postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMS] (or postgresql://…), " +
	"mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMS]"

// target is a parsed DSN: which backend, what to hand its driver, and how to
// name the database in messages (never with a password).
type target struct {
	dialect    *dialect
	driverDSN  string
	display    string
	sqlitePath string // the database file, for SQLite
	maxConns   int    // the process's connection budget: pool_max_conns, else DefaultMaxConns
	// pooled: the server is reached through a transaction pooler
	// (pooler=transaction), so no connection keeps session state and
	// LISTEN cannot pass.
	pooled bool
}

// DefaultPath is where the SQLite database lives when no DSN names one:
// $XDG_STATE_HOME/jobctl/jobctl.db, else ~/.local/state/jobctl/jobctl.db.
// Without a known home directory it falls back to jobctl.db in the working
// directory.
func DefaultPath() string {
	// The XDG spec says to ignore a relative XDG_STATE_HOME.
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "jobctl", "jobctl.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "jobctl.db"
	}
	return filepath.Join(home, ".local", "state", "jobctl", "jobctl.db")
}

// DSNError is a DSN that cannot be parsed: the command line, environment
// or config file is wrong, not the database. It matches engine.ErrInvalid.
type DSNError struct {
	Err error
}

// Error is one line: a control character the DSN held is shown escaped.
func (e *DSNError) Error() string {
	msg := e.Err.Error()
	if strings.ContainsFunc(msg, unicode.IsControl) {
		q := strconv.Quote(msg)
		msg = q[1 : len(q)-1]
	}
	return msg
}

func (e *DSNError) Unwrap() error { return e.Err }

// Is lets errors.Is(err, engine.ErrInvalid) match.
func (e *DSNError) Is(target error) bool { return target == engine.ErrInvalid }

// parseDSN parses dsn; an error is a *DSNError.
func parseDSN(dsn string) (*target, error) {
	t, err := parseAnyDSN(dsn)
	if err != nil {
		var de *DSNError
		if !errors.As(err, &de) {
			err = &DSNError{Err: err}
		}
		return nil, err
	}
	return t, nil
}

func parseAnyDSN(dsn string) (*target, error) {
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok {
		return nil, fmt.Errorf("database %q has no scheme; %s", redact(dsn), validForms)
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return parseSQLite(rest)
	case "postgres", "postgresql":
		return parsePostgres(dsn)
	case "mysql":
		return parseMySQL(dsn)
	}
	return nil, fmt.Errorf("database %q: unknown kind %q; %s", redact(dsn), scheme, validForms)
}

func parseSQLite(path string) (*target, error) {
	switch {
	case path == "":
		path = DefaultPath()
	case strings.HasPrefix(path, "//"):
		// sqlite://x is ambiguous (host x, or a relative path?); one form only.
		return nil, fmt.Errorf("database sqlite:%s: write sqlite:PATH, e.g. sqlite:/var/lib/jobctl/jobctl.db or sqlite:jobctl.db; %s", path, validForms)
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return nil, fmt.Errorf("database sqlite:%s: only a database file path is supported, since every jobctl command opens the database anew; %s", path, validForms)
	case strings.ContainsAny(path, "?#"):
		return nil, fmt.Errorf("database sqlite:%s: the path may not contain '?' or '#'; %s", path, validForms)
	case strings.HasPrefix(path, "~/"):
		// No shell expands a tilde after "sqlite:"; do what was meant.
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("database sqlite:%s: %w", path, err)
		}
		path = filepath.Join(home, path[2:])
	}
	// busy_timeout: wait for the one writer instead of failing at once.
	// _txlock=immediate: a write transaction takes the write lock when it
	// begins, so two transactions cannot both read and then deadlock on
	// upgrading to write (which SQLite reports as SQLITE_BUSY, at once).
	params := url.Values{}
	params.Set("_busy_timeout", "10000")
	params.Set("_journal_mode", "WAL")
	params.Set("_foreign_keys", "1")
	params.Set("_synchronous", "NORMAL") // safe with WAL: a crash loses at most the last commits, never consistency
	params.Set("_txlock", "immediate")
	return &target{
		dialect:    sqliteDialect,
		driverDSN:  path + "?" + params.Encode(),
		display:    "sqlite:" + path,
		sqlitePath: path,
		maxConns:   DefaultMaxConns,
	}, nil
}

func parsePostgres(dsn string) (*target, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: %v; %s", redact(dsn), unwrapURLError(err), validForms)
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return nil, fmt.Errorf("database %s: no host; %s", redact(dsn), validForms)
	}
	maxConns, err := takePoolMaxConns(u)
	if err != nil {
		return nil, err
	}
	pooled, err := takePooler(u)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	// lib/pq insists on TLS unless told otherwise; behave like psql and
	// other libpq clients instead: TLS when the server offers it.
	if q.Get("sslmode") == "" && os.Getenv("PGSSLMODE") == "" {
		q.Set("sslmode", "prefer")
	}
	// binary_parameters: lib/pq sends a statement with its parameters in
	// one go instead of first asking the server for their types, which
	// saves a round trip on every statement. It changes how []byte travels
	// (as binary, which bytea takes as is); the store sends no []byte to a
	// column of another type.
	//
	// It is also what makes lib/pq safe behind a transaction pooler: a
	// statement with parameters travels as one Parse/Bind/Execute/Sync
	// exchange on the unnamed statement, which the pooler keeps on one
	// server connection. Without it lib/pq prepares first, in an exchange
	// of its own, and the pooler may run the two on different servers.
	if !q.Has("binary_parameters") {
		q.Set("binary_parameters", "yes")
	}
	if pooled {
		if err := checkPooledParams(u, q); err != nil {
			return nil, err
		}
	}
	// lib/pq reads PGPASSWORD anew on every connection; taken into the
	// address now, it can leave the environment: serve removes it once the
	// database is open, so nothing it starts inherits it.
	if _, has := u.User.Password(); !has && !q.Has("password") {
		if pw := os.Getenv("PGPASSWORD"); pw != "" {
			q.Set("password", pw)
		}
	}
	u.RawQuery = q.Encode()
	return &target{
		dialect:   postgresDialect,
		driverDSN: u.String(),
		display:   redactURL(u),
		maxConns:  maxConns,
		pooled:    pooled,
	}, nil
}

// poolerParam tells jobctl that a PostgreSQL server is reached through a
// transaction pooler such as PgBouncer with pool_mode=transaction; like
// pool_max_conns it is jobctl's own and never reaches the driver.
const poolerParam = "pooler"

// takePooler removes pooler from u and reports whether it names a
// transaction pooler. A session pooler keeps a server connection per client,
// which is what jobctl sees without a pooler: it needs no parameter.
func takePooler(u *url.URL) (bool, error) {
	q := u.Query()
	values, ok := q[poolerParam]
	if !ok {
		return false, nil
	}
	if len(values) > 1 || values[0] != "transaction" {
		return false, &engine.InvalidError{What: "database " + redactURL(u), Problems: []string{fmt.Sprintf(
			"%s=%s: give it once, as %s=transaction, for a pooler that hands out a server connection per transaction (PgBouncer's pool_mode=transaction); leave it out for a direct connection or a session pooler",
			poolerParam, strings.Join(values, ","), poolerParam)}}
	}
	q.Del(poolerParam)
	u.RawQuery = q.Encode()
	return true, nil
}

// checkPooledParams refuses, behind a transaction pooler, the parameters
// that would need one server connection per client: lib/pq's two-step
// prepared statements, and settings given at connection start, which a
// pooler either refuses or drops (PgBouncer passes neither search_path
// nor options on, unless told to ignore them, and then they are lost).
func checkPooledParams(u *url.URL, q url.Values) error {
	var problems []string
	if v := q.Get("binary_parameters"); v != "yes" {
		problems = append(problems, fmt.Sprintf(
			"binary_parameters=%s: behind a transaction pooler it must stay yes, so that every statement is one exchange the pooler keeps on one server connection", v))
	}
	for _, name := range []string{"search_path", "options"} {
		if q.Has(name) {
			problems = append(problems, fmt.Sprintf(
				"%s: a setting made when a connection starts does not survive a transaction pooler; give the cluster a database of its own instead of a schema", name))
		}
	}
	if len(problems) > 0 {
		return &engine.InvalidError{What: "database " + redactURL(u) + " (" + poolerParam + "=transaction)", Problems: problems}
	}
	return nil
}

// DSNHasPassword reports whether dsn carries a password, in its user part
// or as a password parameter.
func DSNHasPassword(dsn string) bool {
	u, err := url.Parse(dsn)
	if err != nil {
		return false
	}
	if _, has := u.User.Password(); has {
		return true
	}
	return u.Query().Has("password")
}

// redactURL names the database for messages: scheme, user, host and
// database, without the password or parameters (which may hold secrets).
func redactURL(u *url.URL) string {
	if u.Opaque != "" {
		// postgres:user:pass@host: not a URL with a host; the opaque
		// part may hold anything.
		return redact(u.Scheme + ":" + u.Opaque)
	}
	c := *u
	c.RawQuery = ""
	c.Fragment = ""
	c.RawFragment = ""
	c.ForceQuery = false
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// redact names a DSN for messages without what may be a password: a DSN
// that parses as a URL with a host as redactURL does, anything else as
// its scheme and what follows the last '@', up to any '?' or '#'.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Host != "" && u.Opaque == "" {
		return redactURL(u)
	}
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok {
		return dsn // no ':' at all, so no USER:PASSWORD either
	}
	rest = strings.TrimPrefix(rest, "//")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "xxxxx@" + rest[at+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return scheme + "://" + rest
}

// unwrapURLError drops url.Error's echo of the whole URL, password and all,
// and the quoted piece of it some of its messages end with (an "invalid
// port" is often the tail of a password with a '#' or '/').
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		return fmt.Errorf("%s in the URL (percent-encode '#', '/', '?', '@' and '%%' in a user or password)", strings.TrimSpace(msg[:i]))
	}
	return err
}

func parseMySQL(dsn string) (*target, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: %v; %s", redact(dsn), unwrapURLError(err), validForms)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("database %s: no host; %s", redact(dsn), validForms)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	if dbName == "" || strings.Contains(dbName, "/") {
		return nil, fmt.Errorf("database %s: name one database, as in mysql://USER@HOST/DATABASE; %s", redactURL(u), validForms)
	}
	maxConns, err := takePoolMaxConns(u)
	if err != nil {
		return nil, err
	}
	if u.Query().Has(poolerParam) {
		return nil, &engine.InvalidError{What: "database " + redactURL(u), Problems: []string{
			poolerParam + ": a transaction pooler is supported for PostgreSQL only"}}
	}
	// The driver's own DSN syntax cannot carry every password; let it
	// parse only the parameters and set who and where directly.
	cfg, err := mysql.ParseDSN("/?" + u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("database %s: %v; %s", redactURL(u), err, validForms)
	}
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	cfg.DBName = dbName
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	// What the store relies on, whatever the DSN says:
	cfg.ParseTime = true       // DATETIME as time.Time
	cfg.Loc = time.UTC         // stored times are UTC
	cfg.MultiStatements = true // a migration is one script
	// Rows matched, not rows changed: an UPDATE that sets what is already
	// there still counts, as on the other backends (a lease renewal in the
	// same microsecond, a repeated progress report).
	cfg.ClientFoundRows = true
	return &target{
		dialect:   mysqlDialect,
		driverDSN: cfg.FormatDSN(),
		display:   redactURL(u),
		maxConns:  maxConns,
	}, nil
}

// A process's connection budget: every connection it holds to the
// database, whatever for (see the package doc). DefaultMaxConns is what a
// process holds at most unless told otherwise; the budget is at least
// MinMaxConns (the control connection, the listener and one for the rest)
// and at most MaxMaxConns.
const (
	DefaultMaxConns = 6
	MinMaxConns     = 3
	MaxMaxConns     = 1000
)

// poolMaxConnsParam sets the budget in a PostgreSQL or MySQL DSN. It is
// jobctl's own: taken out before the driver, which would refuse it or send
// it to the server as a setting, sees the DSN.
const poolMaxConnsParam = "pool_max_conns"

// takePoolMaxConns removes pool_max_conns from u and returns the budget it
// sets, else DefaultMaxConns. A bad value is an *engine.InvalidError: the
// command line is wrong, not the database.
func takePoolMaxConns(u *url.URL) (int, error) {
	q := u.Query()
	values, ok := q[poolMaxConnsParam]
	if !ok {
		return DefaultMaxConns, nil
	}
	n, err := strconv.Atoi(values[0])
	if len(values) > 1 || err != nil || n < MinMaxConns || n > MaxMaxConns {
		return 0, &engine.InvalidError{What: "database " + redactURL(u), Problems: []string{fmt.Sprintf(
			"%s=%s: give the most connections this process may hold once, a whole number from %d to %d",
			poolMaxConnsParam, strings.Join(values, ","), MinMaxConns, MaxMaxConns)}}
	}
	q.Del(poolMaxConnsParam)
	u.RawQuery = q.Encode()
	return n, nil
}

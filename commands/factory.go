package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/endpoint"
)

// Factory gives commands what they need from the outside world. Tests
// replace its fields; NewFactory wires the real ones.
type Factory struct {
	IO    *IOStreams
	Clock engine.Clock

	// Store opens the database named by --db / JOBCTL_DB / the config
	// file / the default SQLite path (dbstore.DefaultPath()), migrates it
	// on first use, and caches it for the process.
	Store func(ctx context.Context) (engine.Store, error)
	// Open opens the same database without migrating it, for the db
	// commands that report or apply migrations themselves.
	Open func(ctx context.Context) (engine.Store, error)
	// DSN is the effective DSN; never print it with a password.
	DSN func() string
	// DBChoice says which database is in use and where that choice came
	// from; its error is a config file that cannot be read.
	DBChoice func() (DBChoice, error)
	// ConfigPath is the config file holding the default --db.
	ConfigPath func() string
	// Job is the job this command runs in, read from the environment its
	// node gave it; the zero JobEnv outside a job.
	Job func() JobEnv
	// Who names the person running the command, user@host, for the
	// events of the changes it makes; nil: the OS user at this host.
	Who func() string

	dbFlag     string // --db, bound by NewRootCmd
	dbFileFlag string // --db-file, bound by NewRootCmd
	serveDB    DBChoice
	hasServeDB bool
	pinnedDB   *DBChoice // the choice serve made, kept once its sources are gone

	mu         sync.Mutex
	inspecting bool         // the command only reads: never create the database (inspect.go)
	appName    string       // names this process to the database server (see UseDBOptions)
	maxConns   int          // the process's connection budget; 0: the DSN's or the default
	opened     engine.Store // what Open opened, closed by Close
	migrated   engine.Store // what Store checked and migrated
}

// UseDBOptions sets, before the database is opened, how this process
// appears to the database server (PostgreSQL's application_name, which
// pg_stat_activity shows: the command by default, "jobctl serve NODE" for
// a node) and, unless 0, the most connections it holds.
func (f *Factory) UseDBOptions(appName string, maxConns int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if appName != "" {
		f.appName = appName
	}
	f.maxConns = maxConns
}

// Where the choice of the database came from, in order of precedence.
const (
	DBFromFlag       = "--db"
	DBFromFileFlag   = "--db-file"
	DBFromEnv        = "$JOBCTL_DB"
	DBFromFileEnv    = "$JOBCTL_DB_FILE"
	DBFromCredential = "systemd credential"
	DBFromConfig     = "config file"
	DBFromDefault    = "default"
)

// DBCredential is the name of the systemd credential that holds the
// database address: LoadCredential=jobctl-db:/etc/jobctl/db in a unit makes
// it $CREDENTIALS_DIRECTORY/jobctl-db for the service alone.
const DBCredential = "jobctl-db"

// DBChoice is the database commands use and where it was chosen.
type DBChoice struct {
	DSN    string // may hold a password: never print it
	Source string // one of the DBFrom constants
	Path   string // the file it was read from: config file, --db-file, credential
}

// NewFactory returns a factory on the given streams, the system clock and
// the database chosen by --db, JOBCTL_DB, the config file or the default
// path.
func NewFactory(ios *IOStreams) *Factory {
	f := &Factory{IO: ios, Clock: engine.SystemClock{}, ConfigPath: UserConfigPath}
	f.Job = func() JobEnv { return jobFromEnv(f.dbFlag != "" || f.dbFileFlag != "") }
	f.DBChoice = f.chooseDB
	f.DSN = func() string {
		c, _ := f.DBChoice()
		return c.DSN
	}
	f.Open = f.openOnce
	f.Store = f.migratedStore
	return f
}

// chooseDB applies the documented precedence: --db or --db-file, then
// JOBCTL_DB or JOBCTL_DB_FILE, then the systemd credential jobctl-db, then
// the config file (serve --config's, else the user's), then SQLite at the
// default path.
func (f *Factory) chooseDB() (DBChoice, error) {
	if f.pinnedDB != nil {
		return *f.pinnedDB, nil
	}
	switch {
	case f.dbFlag != "" && f.dbFileFlag != "":
		return DBChoice{}, &UsageError{Err: errors.New("--db and --db-file both name the database; give one of them")}
	case f.dbFlag != "":
		return DBChoice{DSN: f.dbFlag, Source: DBFromFlag}, nil
	case f.dbFileFlag != "":
		return readDBFile(f.dbFileFlag, DBFromFileFlag)
	}
	env, envFile := os.Getenv("JOBCTL_DB"), os.Getenv("JOBCTL_DB_FILE")
	switch {
	case env != "" && envFile != "":
		return DBChoice{}, &UsageError{Err: errors.New("JOBCTL_DB and JOBCTL_DB_FILE are both set; unset one of them")}
	case env != "":
		return DBChoice{DSN: env, Source: DBFromEnv}, nil
	case envFile != "":
		return readDBFile(envFile, DBFromFileEnv)
	}
	if f.job().ViaNode() {
		return DBChoice{}, ErrJobHasNoDatabase
	}
	if c, ok, err := credentialDB(); ok || err != nil {
		return c, err
	}
	if f.hasServeDB {
		return f.serveDB, nil
	}
	path := f.ConfigPath()
	c, err := readUserConfig(path)
	if err != nil {
		return DBChoice{}, err
	}
	if c.DB != "" {
		return DBChoice{DSN: c.DB, Source: DBFromConfig, Path: path}, nil
	}
	return DBChoice{DSN: "sqlite:" + dbstore.DefaultPath(), Source: DBFromDefault}, nil
}

// pinDB keeps the database chosen now as this process's choice, for serve,
// which removes the variables it came from once the database is open.
func (f *Factory) pinDB() error {
	c, err := f.chooseDB()
	if err != nil {
		return err
	}
	f.pinnedDB = &c
	return nil
}

// useConfigDB makes the db of a config file given on the command line
// (serve --config) the choice after --db and JOBCTL_DB, ahead of the
// user's config file.
func (f *Factory) useConfigDB(dsn, path string) {
	f.serveDB, f.hasServeDB = DBChoice{DSN: dsn, Source: DBFromConfig, Path: path}, true
}

// openOnce opens the database the first time and returns the same store
// afterwards, so one command invocation holds one connection pool.
func (f *Factory) openOnce(ctx context.Context) (engine.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened != nil {
		return f.opened, nil
	}
	// A config file that cannot be read is reported as such, rather than
	// as a database without a name.
	if f.DBChoice != nil {
		if _, err := f.DBChoice(); err != nil {
			return nil, err
		}
	}
	s, err := dbstore.OpenWith(ctx, f.DSN(), dbstore.OpenOptions{
		MustExist: f.inspecting,
		Warn:      func(msg string) { fmt.Fprintf(f.IO.ErrOut, "jobctl: warning: %s\n", msg) },
		AppName:   f.appName,
		MaxConns:  f.maxConns,
	})
	var missing *dbstore.NoDatabaseError
	if errors.As(err, &missing) {
		return nil, &NoDatabaseError{Location: missing.Location, Err: err}
	}
	if err != nil {
		return nil, err
	}
	f.opened = s
	return s, nil
}

// migratedStore opens the database and applies pending migrations once per
// process. It asks first, so the common case of an up-to-date schema only
// reads and never queues behind the migration lock; and it asks with one
// cheap read (SchemaCurrent), the list of migrations only when that says
// the schema is missing or behind.
func (f *Factory) migratedStore(ctx context.Context) (engine.Store, error) {
	s, err := f.Open(ctx)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.migrated == s {
		return s, nil
	}
	if current, err := s.SchemaCurrent(ctx); err == nil && current {
		f.migrated = s
		return s, nil
	}
	ms, err := s.MigrationStatus(ctx)
	if f.inspecting {
		// Bring an existing schema up to date, but create none.
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(ms, func(m engine.Migration) bool { return m.AppliedAt != nil }) {
			return nil, &NoDatabaseError{Location: storeLocation(s)}
		}
	}
	if err != nil || slices.ContainsFunc(ms, func(m engine.Migration) bool { return m.AppliedAt == nil }) {
		if err := s.Migrate(ctx); err != nil {
			return nil, err
		}
	}
	f.migrated = s
	return s, nil
}

// Close closes the database if this factory opened it.
func (f *Factory) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened == nil {
		return nil
	}
	err := f.opened.Close()
	f.opened, f.migrated = nil, nil
	return err
}

// ErrJobHasNoDatabase is what a command that needs the database says when
// it runs inside a job, which reaches the cluster only through its node.
var ErrJobHasNoDatabase = errors.New("a job has no database access; inside a job only 'jobctl submit --child', 'jobctl progress' and 'jobctl wait --children' work")

// JobEnv is what a command run inside a job knows of that job.
type JobEnv struct {
	ID    int64  // $JOBCTL_JOB_ID; 0 outside a job
	URL   string // $JOBCTL_URL: the endpoint of the node running the job
	Token string // $JOBCTL_JOB_TOKEN: the job's own token for it
	// CAFile is $JOBCTL_CA_FILE: the certificate of a node serving HTTPS,
	// trusted for its endpoint; empty: the system's roots.
	CAFile string
	// viaNode: the job's node is the way to the cluster, as neither --db
	// nor JOBCTL_DB names a database.
	viaNode bool
}

// InJob reports whether the command runs inside a job.
func (e JobEnv) InJob() bool { return e.ID > 0 }

// ViaNode reports whether the command reaches the cluster through the
// job's node instead of a database.
func (e JobEnv) ViaNode() bool { return e.viaNode }

// Client speaks to the job's own API on its node.
func (e JobEnv) Client() *endpoint.JobClient {
	c := endpoint.NewJobClient(e.URL, e.Token, e.ID)
	if e.CAFile != "" {
		c.TrustFile(e.CAFile)
	}
	return c
}

// job is the job this command runs in; the zero JobEnv outside one, or
// when a test's factory says nothing of jobs.
func (f *Factory) job() JobEnv {
	if f.Job == nil {
		return JobEnv{}
	}
	return f.Job()
}

// jobFromEnv reads the job's environment; dbNamed: --db or --db-file was
// given.
func jobFromEnv(dbNamed bool) JobEnv {
	id, err := strconv.ParseInt(os.Getenv("JOBCTL_JOB_ID"), 10, 64)
	if err != nil || id <= 0 {
		return JobEnv{}
	}
	e := JobEnv{ID: id, URL: os.Getenv("JOBCTL_URL"), Token: os.Getenv("JOBCTL_JOB_TOKEN"), CAFile: os.Getenv("JOBCTL_CA_FILE")}
	e.viaNode = e.URL != "" && e.Token != "" && !dbNamed && os.Getenv("JOBCTL_DB") == "" && os.Getenv("JOBCTL_DB_FILE") == ""
	return e
}

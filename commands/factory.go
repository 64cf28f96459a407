package commands

import (
	"context"
	"os"
	"slices"
	"sync"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
)

// Factory gives commands what they need from the outside world. Tests
// replace its fields; NewFactory wires the real ones.
type Factory struct {
	IO    *IOStreams
	Clock engine.Clock

	// Store opens the database named by --db / JOBCTL_DB / the default
	// SQLite path (dbstore.DefaultPath()), migrates it on first use, and
	// caches it for the process.
	Store func(ctx context.Context) (engine.Store, error)
	// Open opens the same database without migrating it, for the db
	// commands that report or apply migrations themselves.
	Open func(ctx context.Context) (engine.Store, error)
	// DSN is the effective DSN (for JOBCTL_DB in job environments); never
	// print it with a password.
	DSN func() string

	dbFlag string // --db, bound by NewRootCmd

	mu       sync.Mutex
	opened   engine.Store // what Open opened, closed by Close
	migrated engine.Store // what Store checked and migrated
}

// NewFactory returns a factory on the given streams, the system clock and
// the database chosen by --db, JOBCTL_DB or the default path.
func NewFactory(ios *IOStreams) *Factory {
	f := &Factory{IO: ios, Clock: engine.SystemClock{}}
	f.DSN = f.effectiveDSN
	f.Open = f.openOnce
	f.Store = f.migratedStore
	return f
}

// effectiveDSN applies the documented precedence: --db, then JOBCTL_DB,
// then SQLite at the default path.
func (f *Factory) effectiveDSN() string {
	if f.dbFlag != "" {
		return f.dbFlag
	}
	if env := os.Getenv("JOBCTL_DB"); env != "" {
		return env
	}
	return "sqlite:" + dbstore.DefaultPath()
}

// openOnce opens the database the first time and returns the same store
// afterwards, so one command invocation holds one connection pool.
func (f *Factory) openOnce(ctx context.Context) (engine.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened != nil {
		return f.opened, nil
	}
	s, err := dbstore.Open(ctx, f.DSN())
	if err != nil {
		return nil, err
	}
	f.opened = s
	return s, nil
}

// migratedStore opens the database and applies pending migrations once per
// process. It asks first, so the common case of an up-to-date schema only
// reads and never queues behind the migration lock.
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
	ms, err := s.MigrationStatus(ctx)
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

package dbstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
	jobsql "github.com/jobctl/jobctl/sql"
)

// Migrate applies the pending migrations, each in its own transaction
// together with its schema_migrations row. Processes starting together do
// not race: every migration transaction first excludes the others (on
// PostgreSQL a transaction-level advisory lock, which also holds behind a
// transaction pooler; on MySQL a named lock around the whole run; on SQLite
// the write lock, from the transaction's start) and then checks again
// whether its migration is still pending. Applying twice is a no-op.
func (s *Store) Migrate(ctx context.Context) error {
	migrations, err := jobsql.Migrations(s.dialect.name)
	if err != nil {
		return err
	}
	err = s.withMigrationConn(ctx, func(conn *sqlx.Conn) error {
		for _, m := range migrations {
			err := s.migrationTx(ctx, conn, func(tx *sqlx.Tx) error {
				applied, err := s.migrationApplied(ctx, tx, m.Version)
				if err != nil || applied {
					return err
				}
				if _, err := tx.ExecContext(ctx, m.Up); err != nil {
					return err
				}
				_, err = s.exec(ctx, tx, qSchemaMigrationInsert, args{"version": m.Version, "name": m.Name})
				return err
			})
			if err != nil {
				return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", s.location, err)
	}
	return nil
}

// MigrateDown reverts the applied migrations above version target, newest
// first, each in its own transaction. MigrateDown(ctx, 0) removes jobctl's
// tables and their data.
func (s *Store) MigrateDown(ctx context.Context, target int) error {
	if target < 0 {
		return fmt.Errorf("migrate down: target version %d is negative", target)
	}
	migrations, err := jobsql.Migrations(s.dialect.name)
	if err != nil {
		return err
	}
	err = s.withMigrationConn(ctx, func(conn *sqlx.Conn) error {
		var applied []migrationRow
		if err := s.selectRows(ctx, conn, &applied, qSchemaMigrationsList, nil, false); err != nil {
			return err
		}
		for _, a := range applied {
			if a.Version > len(migrations) && a.Version > target {
				return fmt.Errorf("migration %03d_%s is applied but unknown to this jobctl, which cannot revert it", a.Version, a.Name)
			}
		}
		for _, m := range slices.Backward(migrations) {
			if m.Version <= target {
				break
			}
			err := s.migrationTx(ctx, conn, func(tx *sqlx.Tx) error {
				applied, err := s.migrationApplied(ctx, tx, m.Version)
				if err != nil || !applied {
					return err
				}
				if _, err := tx.ExecContext(ctx, m.Down); err != nil {
					return err
				}
				_, err = s.exec(ctx, tx, qSchemaMigrationDelete, args{"version": m.Version})
				return err
			})
			if err != nil {
				return fmt.Errorf("revert migration %03d_%s: %w", m.Version, m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate %s down to %d: %w", s.location, target, err)
	}
	return nil
}

// MigrationStatus lists every migration this jobctl knows, with when it was
// applied (nil: pending), followed by any applied migration it does not know
// (the database was migrated by a newer jobctl).
func (s *Store) MigrationStatus(ctx context.Context) ([]engine.Migration, error) {
	migrations, err := jobsql.Migrations(s.dialect.name)
	if err != nil {
		return nil, err
	}
	var exists int64
	if err := s.get(ctx, s.q, &exists, qSchemaMigrationsExists, nil); err != nil {
		return nil, fmt.Errorf("read migration status: %w", err)
	}
	applied := map[int]migrationRow{}
	if exists > 0 {
		var rows []migrationRow
		if err := s.selectRows(ctx, s.q, &rows, qSchemaMigrationsList, nil, false); err != nil {
			return nil, fmt.Errorf("read migration status: %w", err)
		}
		for _, r := range rows {
			applied[r.Version] = r
		}
	}
	out := make([]engine.Migration, 0, len(migrations))
	for _, m := range migrations {
		st := engine.Migration{Version: m.Version, Name: m.Name}
		if r, ok := applied[m.Version]; ok {
			st.AppliedAt = r.AppliedAt.ptr()
			delete(applied, m.Version)
		}
		out = append(out, st)
	}
	unknown := make([]engine.Migration, 0, len(applied))
	for _, r := range applied {
		unknown = append(unknown, engine.Migration{Version: r.Version, Name: r.Name, AppliedAt: r.AppliedAt.ptr()})
	}
	slices.SortFunc(unknown, func(a, b engine.Migration) int { return a.Version - b.Version })
	return append(out, unknown...), nil
}

// SchemaCurrent reports whether the newest migration this jobctl knows, or
// a later one, is applied: one read of the highest applied version, where
// MigrationStatus reads the catalog and every row of schema_migrations.
// Migrations are applied in order, so the highest says it all. A database
// without schema_migrations is an error here; MigrationStatus tells it
// apart.
func (s *Store) SchemaCurrent(ctx context.Context) (bool, error) {
	migrations, err := jobsql.Migrations(s.dialect.name)
	if err != nil {
		return false, err
	}
	var version sql.NullInt64
	if err := s.get(ctx, s.q, &version, qSchemaVersion, nil); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	newest := 0
	for _, m := range migrations {
		newest = max(newest, m.Version)
	}
	return version.Valid && int(version.Int64) >= newest, nil
}

// withMigrationConn runs fn on one dedicated connection, holding the
// dialect's migration lock where it is a session's, after making sure
// schema_migrations exists.
func (s *Store) withMigrationConn(ctx context.Context, fn func(conn *sqlx.Conn) error) (err error) {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.dialect.migrationLock {
		var locked int
		if err := s.get(ctx, conn, &locked, qMigrateLock, nil); err != nil {
			return fmt.Errorf("take the migration lock: %w", err)
		}
		if locked != 1 {
			return fmt.Errorf("take the migration lock: another process held it too long")
		}
		defer func() {
			// Unlock even when ctx is cancelled. If that fails, the session
			// still holds the lock: discard the connection rather than give
			// it back to the pool, so the server drops the lock with it.
			var released any
			if uerr := s.get(context.WithoutCancel(ctx), conn, &released, qMigrateUnlock, nil); uerr != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
				err = errors.Join(err, fmt.Errorf("release the migration lock: %w", uerr))
			}
		}()
	}
	err = s.migrationTx(ctx, conn, func(tx *sqlx.Tx) error {
		_, err := s.exec(ctx, tx, qSchemaMigrationsCreate, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return fn(conn)
}

// migrationTx runs fn in one transaction on conn, which first takes the
// migration lock where the dialect's lock is a transaction's
// (dialect.migrationTxLock).
func (s *Store) migrationTx(ctx context.Context, conn *sqlx.Conn, fn func(tx *sqlx.Tx) error) error {
	return runTx(ctx, conn, func(tx *sqlx.Tx) error {
		if s.dialect.migrationTxLock {
			var locked int
			if err := s.get(ctx, tx, &locked, qMigrateTxLock, nil); err != nil {
				return fmt.Errorf("take the migration lock: %w", err)
			}
		}
		return fn(tx)
	})
}

func (s *Store) migrationApplied(ctx context.Context, q querier, version int) (bool, error) {
	var n int64
	if err := s.get(ctx, q, &n, qSchemaMigrationApplied, args{"version": version}); err != nil {
		return false, err
	}
	return n > 0, nil
}

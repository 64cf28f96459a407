package dbstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/storetest"
)

// mysqlBaseDSN is the test server (MySQL or MariaDB); each test works in a
// database of its own, so the account needs CREATE and DROP.
func mysqlBaseDSN() string {
	if dsn := os.Getenv("JOBCTL_TEST_MYSQL"); dsn != "" {
		return dsn
	}
	return "mysql://root@127.0.0.1:3306/test"
}

// mysqlDatabaseDSN creates a fresh database, dropped when the test ends,
// and returns its DSN. An unreachable server fails the test.
func mysqlDatabaseDSN(t testing.TB) string {
	t.Helper()
	base := mysqlBaseDSN()
	tgt, err := parseDSN(base)
	if err != nil {
		t.Fatalf("MySQL test DSN (JOBCTL_TEST_MYSQL): %v", err)
	}
	admin, err := sqlx.Open("mysql", tgt.driverDSN)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.PingContext(t.Context()); err != nil {
		_ = admin.Close()
		t.Fatalf("MySQL at %s is unreachable (set JOBCTL_TEST_MYSQL): %v", tgt.display, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "jobctl_test_" + hex.EncodeToString(b) // letters, digits and _ only: safe unquoted
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func TestMySQLConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) engine.Store {
		return migrated(t, openStore(t, mysqlDatabaseDSN(t)))
	})
}

func TestMySQLConcurrentMigrate(t *testing.T) {
	t.Parallel()
	dsn := mysqlDatabaseDSN(t)
	testConcurrentMigrate(t, func() *Store { return openStore(t, dsn) })
}

func TestMySQLMigrateDownAndUp(t *testing.T) {
	t.Parallel()
	testMigrateDownAndUp(t, migrated(t, openStore(t, mysqlDatabaseDSN(t))))
}

// A node stopped between checking its dispatcher's lease term and starting
// the jobs offered under it must not start them once the term has lapsed:
// on MySQL the term is checked after the update, in its transaction. Here
// the term lapses, and another owner takes the lease, just before the
// update is sent.
func TestMySQLStartUnderATermThatLapsesBeforeItsUpdate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := mysqlDatabaseDSN(t)
	s := migrated(t, openStore(t, dsn))
	other := openStore(t, dsn)
	a, err := s.LeaseAcquire(ctx, "a", time.Minute)
	if err != nil || !a.Held() {
		t.Fatalf("LeaseAcquire(a) = %+v, %v", a, err)
	}
	j := insertQueued(t, s)
	u := engine.QueuedStartUpdate(j, "n1")
	u.StartedUnder = &a
	lapse := func() {
		if _, err := other.LeaseRelease(ctx, "a"); err != nil {
			t.Errorf("LeaseRelease(a): %v", err)
		}
		if b, err := other.LeaseAcquire(ctx, "b", time.Minute); err != nil || !b.Held() {
			t.Errorf("LeaseAcquire(b) = %+v, %v", b, err)
		}
	}
	err = runTx(ctx, s.db, func(tx *sqlx.Tx) error {
		q := &execHook{Tx: tx, before: lapse}
		return s.jobUpdateChunkLocked(ctx, q, []engine.JobUpdate{u}, map[int64]*engine.Job{}, readStarted)
	})
	var lapsed *lapsedTermsError
	if !errors.As(err, &lapsed) {
		t.Fatalf("start under a term that lapsed before its update: %v; want a lapsed term", err)
	}
	if got, _ := s.JobGet(ctx, j.ID); got.Status != engine.StatusQueued || got.Version != j.Version {
		t.Errorf("job after the refused start: %s version %d, want QUEUED version %d", got.Status, got.Version, j.Version)
	}

	// Through JobUpdateMany the start is refused alone and the rest applies.
	j2, j3 := insertQueued(t, s), insertQueued(t, s)
	res, err := s.JobUpdateMany(ctx, []engine.JobUpdate{u, engine.QueuedStartUpdate(j2, "n1"), startUnderCopy(j3, a)})
	if err != nil {
		t.Fatalf("JobUpdateMany: %v", err)
	}
	if !errors.Is(res[0].Err, engine.ErrConflict) || !errors.Is(res[2].Err, engine.ErrConflict) || res[1].Err != nil {
		t.Errorf("JobUpdateMany results: %v, %v, %v; want conflict, applied, conflict", res[0].Err, res[1].Err, res[2].Err)
	}
}

func startUnderCopy(j *engine.Job, term engine.LeaseTerm) engine.JobUpdate {
	u := engine.QueuedStartUpdate(j, "n1")
	u.StartedUnder = &term
	return u
}

// execHook runs before ahead of the transaction's first statement that
// changes rows.
type execHook struct {
	*sqlx.Tx
	before func()
	done   bool
}

func (h *execHook) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !h.done {
		h.done = true
		h.before()
	}
	return h.Tx.ExecContext(ctx, query, args...)
}

package dbstore

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

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

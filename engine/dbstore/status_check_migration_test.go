package dbstore

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// statusCheckVersion is migration 020_status_check_comparisons, which
// rewrites the CHECK of jobs.status in place.
const statusCheckVersion = 20

// TestSQLiteStatusCheckMigration: migration 020 edits the definition of
// jobs without rebuilding it, so the jobs and the rows that refer to them
// stay; every connection, including those open before, then tests a status
// by comparisons, without the temporary index an IN list needs
// (OpenEphemeral), and still refuses a status that is none of jobctl's.
// (Other IN lists remain, in conditions that a job's usual writes decide
// before reaching them.)
// Reverting restores the definition exactly.
func TestSQLiteStatusCheckMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "jobctl.db")
	s := migrated(t, openSQLite(t, path))
	if err := s.MigrateDown(ctx, statusCheckVersion-1); err != nil {
		t.Fatalf("migrate down to %d: %v", statusCheckVersion-1, err)
	}
	original := jobsDefinition(t, s)
	if !strings.Contains(original, "CHECK (status IN (") {
		t.Fatalf("setup: jobs before migration %d has no IN list in its CHECK:\n%s", statusCheckVersion, original)
	}
	j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: "noop", Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReservationSet(ctx, engine.Reservation{JobID: j.ID, Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO job_logs (job_id, attempt, data, created_at) VALUES (?, 0, x'61', 'now')`, j.ID); err != nil {
		t.Fatal(err)
	}
	// Another process's store, its connection open (and the old definition
	// read) before the migration.
	other := openSQLite(t, path)
	otherConn := connWithSchema(t, other)
	before := statusWriteTempIndexes(t, otherConn)

	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate to %d: %v", statusCheckVersion, err)
	}
	if def := jobsDefinition(t, s); strings.Contains(def, "IN (") || !strings.Contains(def, "CHECK (status = 'INSTANTIATED' OR ") {
		t.Errorf("jobs after migration %d:\n%s", statusCheckVersion, def)
	}
	var counts struct {
		Jobs         int `db:"jobs"`
		Logs         int `db:"logs"`
		Reservations int `db:"reservations"`
	}
	err = s.db.GetContext(ctx, &counts, `SELECT (SELECT count(*) FROM jobs) AS jobs,
		(SELECT count(*) FROM job_logs) AS logs, (SELECT count(*) FROM reservations) AS reservations`)
	if err != nil || counts.Jobs != 1 || counts.Logs != 1 || counts.Reservations != 1 {
		t.Errorf("after migration %d: %+v, %v; want the job, its log and its reservation", statusCheckVersion, counts, err)
	}
	var integrity string
	if err := s.db.GetContext(ctx, &integrity, `PRAGMA integrity_check`); err != nil || integrity != "ok" {
		t.Errorf("integrity_check: %q, %v", integrity, err)
	}
	for name, conn := range map[string]*sqlx.Conn{"migrating store": connWithSchema(t, s), "other store": otherConn} {
		_, err := conn.ExecContext(ctx, `UPDATE jobs SET status = 'BOGUS' WHERE id = ?`, j.ID)
		if err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
			t.Errorf("%s: writing status BOGUS: %v, want a failed CHECK", name, err)
		}
		// The write above, run, made a connection of the other store read the
		// schema again, which EXPLAIN alone would not.
		if after := statusWriteTempIndexes(t, conn); after >= before {
			t.Errorf("%s: a status write opens %d temporary indexes, %d before the migration", name, after, before)
		}
	}
	if got, err := s.JobGet(ctx, j.ID); err != nil || got.Status != engine.StatusQueued {
		t.Errorf("JobGet: %+v, %v; want the job QUEUED", got, err)
	}

	if err := s.MigrateDown(ctx, statusCheckVersion-1); err != nil {
		t.Fatalf("migrate down to %d again: %v", statusCheckVersion-1, err)
	}
	if def := jobsDefinition(t, s); def != original {
		t.Errorf("jobs after reverting migration %d:\n%s\nwant:\n%s", statusCheckVersion, def, original)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
}

func jobsDefinition(t *testing.T, s *Store) string {
	t.Helper()
	var def string
	if err := s.db.GetContext(t.Context(), &def, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'jobs'`); err != nil {
		t.Fatal(err)
	}
	return def
}

// connWithSchema holds one connection of s, which has read the schema.
func connWithSchema(t *testing.T, s *Store) *sqlx.Conn {
	t.Helper()
	conn, err := s.db.Connx(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	var n int
	if err := conn.GetContext(t.Context(), &n, `SELECT count(*) FROM jobs`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// statusWriteTempIndexes counts the temporary indexes (OpenEphemeral) in
// SQLite's program for a write of jobs.status, the triggers' included.
func statusWriteTempIndexes(t *testing.T, conn *sqlx.Conn) int {
	t.Helper()
	rows, err := conn.QueryxContext(t.Context(), `EXPLAIN UPDATE jobs SET status = 'QUEUED' WHERE id = 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		row, err := rows.SliceScan()
		if err != nil {
			t.Fatal(err)
		}
		if op, _ := row[1].(string); op == "OpenEphemeral" {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

package dbstore

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// TestJobRowsOfOtherColumnsAreMappedByName: rows of any set of a job's
// columns, in any order, land in the fields of their names; a column a job
// row lacks is an error.
func TestJobRowsOfOtherColumnsAreMappedByName(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, "sqlite:"+filepath.Join(t.TempDir(), "rows.db")))
	job, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Key: "k", Load: 2})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*engine.Job
	if err := selectJobs(t.Context(), s.q, &jobs, "SELECT job_key, id, job_load FROM jobs", nil); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != job.ID || jobs[0].Key != "k" || jobs[0].Load != 2 {
		t.Fatalf("jobs = %+v, want job %d with key k and load 2", jobs, job.ID)
	}
	// Read again into the same slice, as a transaction run again does.
	if err := selectJobs(t.Context(), s.q, &jobs, "SELECT id FROM jobs", nil); err != nil || len(jobs) != 1 {
		t.Fatalf("read again: %d jobs, %v; want the one job once", len(jobs), err)
	}
	if err := selectJobs(t.Context(), s.q, &jobs, "SELECT id, 1 AS stray FROM jobs", nil); err == nil ||
		!strings.Contains(err.Error(), `"stray"`) {
		t.Fatalf("a stray column gave %v; want an error naming it", err)
	}
	got, err := s.JobGet(t.Context(), job.ID)
	if err != nil || got.Key != "k" || got.Load != 2 || got.Type != engine.TypeNoop || got.Version != job.Version {
		t.Fatalf("JobGet = %+v, %v; want the job as inserted", got, err)
	}
}

// TestJobRowsScanAsDatabaseSQLDoes: the jobs scanned straight from job rows
// are those database/sql's conversions give, with every nullable column
// both NULL and set, on each backend. The row with every column set comes
// first, so a value the scan kept from it would show in the next.
func TestJobRowsScanAsDatabaseSQLDoes(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) *Store{
		"postgres": func(t *testing.T) *Store { return migrated(t, openStore(t, postgresSchemaDSN(t))) },
		"sqlite":   func(t *testing.T) *Store { return migratedSQLite(t) },
		"mysql":    func(t *testing.T) *Store { return migrated(t, openStore(t, mysqlDatabaseDSN(t))) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			parent, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued,
				Args: []string{"a", "b"}})
			if err != nil {
				t.Fatal(err)
			}
			child, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued,
				ParentID: &parent.ID, Key: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.q.ExecContext(t.Context(), s.q.Rebind(`UPDATE jobs SET exit_code = 3, cpu_seconds = 0.5,
				peak_memory = 1024, wall_seconds = 1.25, oom_killed = TRUE, rollback_job_id = ?, rollback_of = ?,
				key_position = 7, message = 'm', run_after = created_at, started_at = created_at,
				finished_at = created_at WHERE id = ?`), parent.ID, parent.ID, child.ID); err != nil {
				t.Fatal(err)
			}
			// waited_seconds is computed, as a float: MySQL reads 1.25E0 as
			// one, the others a cast.
			waited := "CAST(1.25 AS double precision)"
			if name == "mysql" {
				waited = "1.25E0"
			}
			columns := strings.Replace(strings.Join(jobColumns, ", "), "waited_seconds", waited+" AS waited_seconds", 1)
			query := "SELECT " + columns + " FROM jobs ORDER BY id DESC"
			var fast []*engine.Job
			if err := selectJobs(t.Context(), s.q, &fast, query, nil); err != nil {
				t.Fatal(err)
			}
			rows, err := s.q.QueryContext(t.Context(), query)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plain []*engine.Job
			for rows.Next() {
				var row jobRow
				if err := rows.Scan(row.fieldsInto(nil)...); err != nil {
					t.Fatal(err)
				}
				job, err := row.job()
				if err != nil {
					t.Fatal(err)
				}
				plain = append(plain, job)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(plain) != 2 || !reflect.DeepEqual(fast, plain) {
				t.Fatalf("scanned straight:\n %+v\nby database/sql:\n %+v", fast, plain)
			}
			if set := fast[0]; set.ExitCode == nil || set.Usage == nil || !set.Usage.OOMKilled || set.ParentID == nil ||
				set.RollbackOf == nil || set.StartedAt == nil {
				t.Fatalf("the set columns were read as unset: %+v", set)
			}
			if unset := fast[1]; unset.ExitCode != nil || unset.Usage != nil || unset.ParentID != nil || unset.StartedAt != nil {
				t.Fatalf("the columns left NULL were read as set: %+v", unset)
			}
			if name == "postgres" && scansToDatabaseSQL(t, s, query) {
				t.Errorf("PostgreSQL's job rows were left to database/sql")
			}
		})
	}
}

// scansToDatabaseSQL reports whether a rowScanner leaves the rows of query
// to database/sql.
func scansToDatabaseSQL(t *testing.T, s *Store, query string) bool {
	t.Helper()
	rows, err := s.q.QueryContext(t.Context(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sc rowScanner
	for rows.Next() {
		var r jobRow
		if err := sc.scan(rows, r.fieldsInto(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return sc.slow
}

// TestIDArrayAsPostgreSQLReturnsIt: the ids a statement returns as one
// array are read in its order, none for NULL, and text that is no array of
// integers is an error, not ids.
func TestIDArrayAsPostgreSQLReturnsIt(t *testing.T) {
	t.Parallel()
	db := postgresServer(t)
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"SELECT array_agg(x ORDER BY x) FROM (VALUES (3), (1), (9007199254740993), (2)) AS v(x)", []int64{1, 2, 3, 9007199254740993}},
		{"SELECT array_agg(x) FROM (SELECT 1 WHERE false) AS v(x)", nil},
		{"SELECT CAST('{}' AS bigint[])", nil},
		{"SELECT x FROM (VALUES (3), (1)) AS v(x) ORDER BY x", []int64{1, 3}}, // a row each, as before
	} {
		ids := []int64{7} // appended to
		if err := selectInt64s(t.Context(), db, &ids, c.query, nil); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if want := append([]int64{7}, c.want...); !slices.Equal(ids, want) {
			t.Errorf("%s: read %v; want %v", c.query, ids, want)
		}
	}
	for _, text := range []string{"1,2", "{1,2", "1,2}", "}", "{a}", "{1,,2}", "{NULL}", ""} {
		if ids, err := appendInt64Array(nil, []byte(text)); err == nil {
			t.Errorf("%q read as the ids %v; want an error", text, ids)
		}
	}
}

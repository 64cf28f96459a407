package dbstore

import (
	"path/filepath"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// TestJobRowsOfOtherColumnsAreMappedByName: rows with exactly the columns of
// job_columns are scanned by position; any other set still lands in the
// right fields, by name.
func TestJobRowsOfOtherColumnsAreMappedByName(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, "sqlite:"+filepath.Join(t.TempDir(), "rows.db")))
	job, err := s.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, Key: "k", Load: 2})
	if err != nil {
		t.Fatal(err)
	}
	var rows []jobRow
	if err := selectJobRows(t.Context(), s.q, &rows, "SELECT job_key, id, job_load FROM jobs", nil); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ID != job.ID || rows[0].Key != "k" || rows[0].Load != 2 {
		t.Fatalf("rows = %+v, want job %d with key k and load 2", rows, job.ID)
	}
	got, err := s.JobGet(t.Context(), job.ID)
	if err != nil || got.Key != "k" || got.Load != 2 || got.Type != engine.TypeNoop || got.Version != job.Version {
		t.Fatalf("JobGet = %+v, %v; want the job as inserted", got, err)
	}
}

-- The jobs that failed finally and await their rollback job, oldest first.
-- SQLite would read them through jobs_status_id, past every FAILED job of
-- the table's history, to spare the sort; the partial index holds only the
-- few awaiting their rollback, so it is named here.
SELECT {{template "job_columns"}}
FROM jobs INDEXED BY jobs_rollback_pending
WHERE status = 'FAILED' AND rollback <> '' AND rollback_job_id IS NULL
ORDER BY id
LIMIT :limit

-- The jobs that failed finally and await their rollback job, oldest first;
-- the lease holder creates their rollback jobs. The terms stand as the
-- partial index jobs_rollback_pending says them, so the read costs the few
-- such jobs, not the failed ones of the table's history.
SELECT {{template "job_columns"}}
FROM jobs
WHERE status = 'FAILED' AND rollback <> '' AND rollback_job_id IS NULL
ORDER BY id
LIMIT :limit

-- job_rollback_set for PostgreSQL, which notifies the dispatchers itself
-- (jobs_changed_notify), as for any FAILED job written. It returns a row
-- for each row it changed, so the count of rows still tells whether it
-- applied.
WITH j AS (
    {{template "job_rollback_guarded"}}
    RETURNING status
)
SELECT 1 FROM j WHERE {{template "jobs_changed_notify"}}

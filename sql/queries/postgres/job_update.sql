-- job_update for PostgreSQL, which notifies the dispatchers itself
-- (jobs_changed_notify). It returns a row for each row it changed, so the
-- count of rows still tells whether it applied.
WITH j AS (
    {{template "job_update_guarded"}}
    RETURNING status
)
SELECT 1 FROM j WHERE {{template "jobs_changed_notify"}}

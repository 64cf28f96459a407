-- job_insert for PostgreSQL, whose insert notifies the dispatchers itself
-- (jobs_changed_notify).
WITH j AS (
    {{template "job_insert_values"}}
    RETURNING id, status
)
SELECT id FROM j WHERE {{template "jobs_changed_notify"}}

-- job_update_many_set, returning the rows it changed, and notifying the
-- dispatchers itself (jobs_changed_notify).
WITH j AS (
    {{template "job_update_many_set"}}
    RETURNING {{template "job_columns"}}
)
SELECT * FROM j WHERE {{template "jobs_changed_notify"}}

-- job_update_many_set, returning the rows it changed, and notifying the
-- dispatchers itself (jobs_changed_notify). Rendered with "started" it
-- returns of each row only what a node runs the job by (JobStartMany).
WITH j AS (
    {{template "job_update_many_set"}}
    RETURNING {{if has . "started"}}{{template "job_columns_started"}}{{else}}{{template "job_columns"}}{{end}}
)
SELECT * FROM j WHERE {{template "jobs_changed_notify"}}

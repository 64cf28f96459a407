-- job_update_many_set, returning the rows it changed. Rendered with
-- "started" it returns of each row only what a node runs the job by
-- (JobStartMany).
{{template "job_update_many_set"}}
RETURNING {{if has . "started"}}{{template "job_columns_started"}}{{else}}{{template "job_columns"}}{{end}}

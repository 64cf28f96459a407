-- The jobs a batch changed, read back in its transaction. The parameter
-- is a JSON array of ids. Rendered with "started" it reads of each job
-- only what a node runs it by (JobStartMany).
SELECT {{if has . "started"}}{{template "job_columns_started"}}{{else}}{{template "job_columns"}}{{end}}
FROM JSON_TABLE(:ids, '$[*]' COLUMNS (job_id BIGINT PATH '$')) AS x
STRAIGHT_JOIN jobs ON jobs.id = x.job_id

-- job_purge_candidates for SQLite, whose planner without statistics would
-- rather read every ended job through jobs_status_id and sort them. The
-- candidates come from jobs_ended, in order, and a range of ids from the
-- primary key alone.
SELECT id, parent_id, finished_at
FROM jobs {{if has . "range"}}NOT INDEXED{{else}}INDEXED BY jobs_ended{{end}}
WHERE {{template "job_purge_filter" .}}
{{if has . "range"}}ORDER BY id{{else}}ORDER BY finished_at, id{{end}}
LIMIT :limit

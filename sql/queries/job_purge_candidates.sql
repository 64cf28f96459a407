-- The purge candidates that ended first (engine.JobPurgeParams), read in
-- that order from the index of ended jobs, jobs_ended, up to the limit; a
-- range of ids is read in id order, through the primary key.
SELECT id, parent_id, finished_at
FROM jobs
WHERE {{template "job_purge_filter" .}}
{{if has . "range"}}ORDER BY id{{else}}ORDER BY finished_at, id{{end}}
LIMIT :limit

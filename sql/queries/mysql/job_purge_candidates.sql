-- job_purge_candidates for MySQL, in the order of jobs_ended, whose
-- column is ended_at (see mysql/job_purge_filter); a range of ids in id
-- order.
SELECT id, parent_id, ended_at AS finished_at
FROM jobs
WHERE {{template "job_purge_filter" .}}
{{if has . "range"}}ORDER BY id{{else}}ORDER BY ended_at, id{{end}}
LIMIT :limit

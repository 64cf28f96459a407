-- The purge candidates that ended first (engine.JobPurgeParams), read in
-- that order from the index of ended jobs, jobs_ended, up to the limit; a
-- range of ids is read through the primary key.
SELECT id, parent_id, finished_at
FROM jobs
WHERE {{template "job_purge_filter" .}}
ORDER BY finished_at, id
LIMIT :limit

-- The jobs that failed finally and await their rollback job, oldest first,
-- through the index of the virtual column rollback_pending_key (migration
-- 008), which is NULL for every other job.
SELECT {{template "job_columns"}}
FROM jobs
WHERE rollback_pending_key IS NOT NULL
ORDER BY id
LIMIT :limit

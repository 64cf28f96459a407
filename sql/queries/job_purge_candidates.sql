SELECT id, parent_id
FROM jobs
WHERE {{template "job_purge_filter"}}
ORDER BY id
LIMIT :limit

-- Every filter is switched off by its own flag, so one statement serves every
-- combination. Newest first, so LIMIT keeps the newest rows; the store
-- returns them oldest first.
SELECT {{template "job_columns"}}
FROM jobs
WHERE (:all_statuses OR status IN (:statuses))
  AND (:all_types OR type IN (:types))
  AND (:node = '' OR node = :node)
  AND (:job_key = '' OR job_key = :job_key)
  AND (:any_parent OR parent_id = :parent_id)
ORDER BY id DESC
LIMIT :limit

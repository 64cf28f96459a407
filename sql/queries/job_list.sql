-- Every filter is switched off by its own flag, so one statement serves every
-- combination. Newest first, so LIMIT keeps the newest rows; the store
-- returns them oldest first.
SELECT {{template "job_columns"}}
FROM jobs
WHERE (:all_statuses OR status IN (:statuses))
  AND {{template "job_list_filters"}}
ORDER BY id DESC
LIMIT :limit

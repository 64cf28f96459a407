-- Newest first, so LIMIT keeps the newest rows; the store returns them
-- oldest first.
SELECT {{template "job_columns"}}
FROM jobs
WHERE {{template "job_list_filter"}}
ORDER BY id DESC
LIMIT :limit

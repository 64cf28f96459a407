-- Newest first, so LIMIT keeps the newest rows; the store returns them
-- oldest first. The creation window needs no index of its own, as created_at
-- grows with id, so with a lower bound the scan down the primary key stops
-- once it has the limit, before the older rows. An upper bound alone first
-- passes over the jobs created after it, in the database.
SELECT {{if .}}{{template "job_columns_brief"}}{{else}}{{template "job_columns"}}{{end}}
FROM jobs
WHERE {{template "job_list_filter"}}
ORDER BY id DESC
LIMIT :limit

-- job_list for states of live jobs only (none ended), such as the
-- dispatcher's scan for DISPATCHING jobs and a node's recovery. Such jobs
-- are few whatever the table's history, and with the status term standing
-- alone every backend finds them in jobs_status_id; SQLite cannot see past
-- the flag that switches job_list's status filter off, and reads every row.
SELECT {{if .}}{{template "job_columns_brief"}}{{else}}{{template "job_columns"}}{{end}}
FROM jobs
WHERE status IN (:statuses)
  AND {{template "job_list_filters"}}
ORDER BY id DESC
LIMIT :limit

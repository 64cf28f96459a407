{{- /*
A job listing (engine.JobListParams). The store renders it once for each
way a listing is read (see dbstore's joblist.go): .Brief reads only the
brief columns; .Live is for states of live jobs only (none ended), such as
the recovery of a silent node's jobs and a node's own: such jobs
are few whatever the table's history, and with the status term standing
alone every backend finds them in its index of live jobs by status
(jobs_status_id; jobs_status_node on PostgreSQL), where SQLite cannot
see past the flag that switches job_list_filter's status filter off and
reads every row. .Order is the ORDER BY, built from engine.JobSortFields only.

Unsorted, it reads newest first, so LIMIT keeps the newest rows; the store
returns them oldest first. The creation window needs no index of its own,
as created_at grows with id, so with a lower bound the scan down the
primary key stops once it has the limit, before the older rows. An upper
bound alone first passes over the jobs created after it, in the database.
*/ -}}
SELECT {{if .Brief}}{{template "job_columns_brief"}}{{else}}{{template "job_columns"}}{{end}}
FROM jobs
WHERE {{if .Live}}status IN (:statuses)
  AND {{template "job_list_filters"}}{{else}}{{template "job_list_filter"}}{{end}}
ORDER BY {{.Order}}
LIMIT :limit

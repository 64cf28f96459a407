-- job_count_by_status for live statuses alone, with the status term
-- standing alone, so every backend counts the jobs in an index of live
-- jobs by status however many ended jobs the table holds. PostgreSQL keeps
-- the queue statuses (jobs_queue) and the other live ones
-- (jobs_status_node) in different indexes, so the statuses of one
-- count are all of the one kind or all of the other.
SELECT status, COUNT(*) AS n
FROM jobs
WHERE status IN (:statuses)
  AND {{template "job_list_filters"}}
GROUP BY status

-- job_purge_delete for MySQL, which has no DELETE … RETURNING; the store
-- counts the rows it removed, and job_purge_attempts and job_purge_events
-- check which went.
DELETE FROM jobs
WHERE id IN (:ids)
  AND status IN {{statuses "terminal"}}

-- The attempts of the jobs job_purge_delete just removed, through the
-- primary key of job_attempts. MySQL's DELETE returns no rows, so the ids
-- are those it was given, and a job the delete kept (requeued meanwhile)
-- keeps its attempts. job_attempts has no foreign key, whose check would
-- cost every ended attempt a lookup of its job.
DELETE FROM job_attempts
WHERE job_id IN (:ids)
  AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_attempts.job_id)

-- The events of the jobs job_purge_delete just removed. MySQL's DELETE
-- returns no rows, so the ids are those it was given, and a job the
-- delete kept (requeued meanwhile) keeps its events.
DELETE FROM events
WHERE job_id IN (:ids)
  AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = events.job_id)

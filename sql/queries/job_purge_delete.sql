-- The status is checked again, so a job requeued since it was chosen
-- stays. Its logs and reservations go with it (ON DELETE CASCADE); the
-- ids that went come back, for job_purge_attempts and job_purge_events.
DELETE FROM jobs
WHERE id IN (:ids)
  AND status IN {{statuses "terminal"}}
RETURNING id

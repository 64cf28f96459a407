-- The status is checked again, so a job requeued since it was chosen
-- stays. Its logs and reservations go with it (ON DELETE CASCADE).
DELETE FROM jobs
WHERE id IN (:ids)
  AND status IN {{statuses "terminal"}}

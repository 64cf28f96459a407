-- The jobs a purge may remove (engine.JobPurgeParams). They have ended,
-- have one of the statuses asked for, and match the filters.
status IN {{statuses "terminal"}}
  AND status IN (:statuses)
  AND (:creator = '' OR creator = :creator)
  AND (:any_finish OR finished_at < :finished_before)

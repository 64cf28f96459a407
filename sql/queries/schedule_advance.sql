-- Guarded by the fire time the firing read, so of two lease holders firing
-- the same time, the second one finds it moved on and changes nothing, so its
-- transaction, and the job it created, roll back.
UPDATE schedules
SET next_fire_at = :next, last_job_id = COALESCE(:last_job_id, last_job_id), updated_at = {{now}}
WHERE name = :name AND next_fire_at = :from AND NOT paused

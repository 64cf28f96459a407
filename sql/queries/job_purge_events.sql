-- The events of the jobs job_purge_delete just removed (the ids it
-- returned), through the index events_job_id.
DELETE FROM events
WHERE job_id IN (:ids)

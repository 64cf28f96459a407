-- The attempts of the jobs job_purge_delete just removed (the ids it
-- returned), through the primary key of job_attempts. job_attempts has no
-- foreign key, whose check would cost every ended attempt a lookup of its
-- job.
DELETE FROM job_attempts
WHERE job_id IN (:ids)

DELETE FROM reservations
WHERE job_id = :job_id

-- The ended attempts of one job, oldest first, as the trigger of migration
-- 009 recorded them.
SELECT attempt, node, started_at, ended_at, exit_code, ending, message
FROM job_attempts
WHERE job_id = :job_id
ORDER BY attempt

-- The ended attempts of one job, oldest first, as the triggers of
-- migrations 009 and 014 recorded them.
SELECT attempt, node, started_at, ended_at, exit_code, ending, message, cpu_seconds, peak_memory, wall_seconds,
       oom_killed
FROM job_attempts
WHERE job_id = :job_id
ORDER BY attempt

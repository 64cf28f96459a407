-- The newest measured attempts of every job type, at most the given
-- number a type, newest first within a type, with the type and load of
-- their job as the trigger of migration 014 copied them. It reads every
-- measured attempt; job_attempt_usage_type reads one type by its index.
SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
FROM (
    SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed,
           ROW_NUMBER() OVER (PARTITION BY job_type ORDER BY ended_at DESC, job_id DESC, attempt DESC) AS n
    FROM job_attempts
    WHERE cpu_seconds IS NOT NULL
) AS newest
WHERE n <= :runs
ORDER BY job_type, n

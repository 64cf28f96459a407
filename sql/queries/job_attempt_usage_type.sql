-- The newest measured attempts of one job type, at most the given number,
-- newest first, in one read down the index on (job_type, ended_at).
SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
FROM job_attempts
WHERE job_type = :job_type AND cpu_seconds IS NOT NULL
ORDER BY ended_at DESC, job_id DESC, attempt DESC
LIMIT :runs

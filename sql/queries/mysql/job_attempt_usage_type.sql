-- job_attempt_usage_type for MySQL, which has no partial index. The
-- virtual columns measured_type of job_attempts and jobs (migration 016)
-- are the type of a measured run and NULL otherwise, and their indexes
-- stand in for the partial ones. The newest of each, then of both.
SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
FROM (
    SELECT * FROM (
        SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
        FROM job_attempts
        WHERE measured_type = :job_type
        ORDER BY ended_at DESC, job_id DESC, attempt DESC
        LIMIT :runs
    ) AS copied
    UNION ALL
    SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
    FROM (
        SELECT {{template "job_final_attempt_columns"}}
        FROM {{template "job_final_attempts"}}
          AND j.measured_type = :job_type
        ORDER BY j.finished_at DESC, j.id DESC
        LIMIT :runs
    ) AS final
) AS measured
ORDER BY ended_at DESC, job_id DESC, attempt DESC
LIMIT :runs

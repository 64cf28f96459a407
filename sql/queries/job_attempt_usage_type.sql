-- The newest measured attempts of one job type, at most the given number,
-- newest first. The newest of job_attempts in one read down the partial
-- index job_attempts_type_measured, the newest final attempts of ended
-- jobs (job_final_attempts) in one read down jobs_type_measured, and the
-- newest of both. Each WHERE repeats its index's terms as written.
SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
FROM (
    SELECT * FROM (
        SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
        FROM job_attempts
        WHERE job_type = :job_type AND cpu_seconds IS NOT NULL
        ORDER BY ended_at DESC, job_id DESC, attempt DESC
        LIMIT :runs
    ) AS copied
    UNION ALL
    SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
    FROM (
        SELECT {{template "job_final_attempt_columns"}}
        FROM {{template "job_final_attempts"}}
          AND j.type = :job_type AND j.cpu_seconds IS NOT NULL
        ORDER BY j.finished_at DESC, j.id DESC
        LIMIT :runs
    ) AS final
) AS measured
ORDER BY ended_at DESC, job_id DESC, attempt DESC
LIMIT :runs

-- The newest measured attempts of every job type, at most the given
-- number a type, newest first within a type, with the type and load of
-- their job. They are those job_attempts holds (the triggers of
-- migrations 014 and 016 copy the type and load) and the final ones the
-- rows of ended jobs hold (job_final_attempts). It reads every measured attempt;
-- job_attempt_usage_type reads one type by its indexes.
SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
FROM (
    SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed,
           ROW_NUMBER() OVER (PARTITION BY job_type ORDER BY ended_at DESC, job_id DESC, attempt DESC) AS n
    FROM (
        SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
        FROM job_attempts
        WHERE cpu_seconds IS NOT NULL
        UNION ALL
        SELECT job_id, attempt, job_type, job_load, ended_at, cpu_seconds, peak_memory, wall_seconds, oom_killed
        FROM (
            SELECT {{template "job_final_attempt_columns"}}
            FROM {{template "job_final_attempts"}}
              AND j.cpu_seconds IS NOT NULL
        ) AS final
    ) AS measured
) AS newest
WHERE n <= :runs
ORDER BY job_type, n

-- The ended attempts of one job, oldest first, those the triggers of
-- migrations 009, 014 and 016 recorded, and the final one its row holds
-- once it has ended (job_final_attempts).
SELECT attempt, node, started_at, ended_at, exit_code, ending, message, cpu_seconds, peak_memory, wall_seconds,
       oom_killed
FROM job_attempts
WHERE job_id = :job_id
UNION ALL
SELECT attempt, node, started_at, ended_at, exit_code, ending, message, cpu_seconds, peak_memory, wall_seconds,
       oom_killed
FROM (
    SELECT {{template "job_final_attempt_columns"}}
    FROM {{template "job_final_attempts"}}
      AND j.id = :job_id
) AS final
ORDER BY attempt

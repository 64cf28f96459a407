-- Every final attempt back into job_attempts, where migration 014's
-- trigger kept them.
INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                          job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
SELECT id, attempt, node, started_at, finished_at, exit_code, status, message,
       type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed
FROM jobs
WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
  AND finished_at IS NOT NULL AND attempt > 0
ON CONFLICT (job_id, attempt) DO NOTHING;

DROP INDEX jobs_type_measured;
DROP INDEX job_attempts_type_measured;
CREATE INDEX job_attempts_type_ended ON job_attempts (job_type, ended_at);

-- The trigger function of migration 014.
CREATE OR REPLACE FUNCTION jobs_record_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    SELECT o.id, o.attempt, o.node, o.started_at, clock_timestamp(), n.exit_code, n.status, n.message,
           o.type, o.job_load, n.cpu_seconds, n.peak_memory, n.wall_seconds, n.oom_killed
    FROM jobs_before AS o JOIN jobs_after AS n ON n.id = o.id
    WHERE o.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (o.status <> 'PAUSED' OR o.node <> '')
      AND n.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = EXCLUDED.node, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
        exit_code = EXCLUDED.exit_code, ending = EXCLUDED.ending, message = EXCLUDED.message,
        job_type = EXCLUDED.job_type, job_load = EXCLUDED.job_load, cpu_seconds = EXCLUDED.cpu_seconds,
        peak_memory = EXCLUDED.peak_memory, wall_seconds = EXCLUDED.wall_seconds, oom_killed = EXCLUDED.oom_killed;
    RETURN NULL;
END
$$;

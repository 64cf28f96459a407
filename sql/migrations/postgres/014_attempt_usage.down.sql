CREATE OR REPLACE FUNCTION jobs_record_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message)
    SELECT o.id, o.attempt, o.node, o.started_at, clock_timestamp(), n.exit_code, n.status, n.message
    FROM jobs_before AS o JOIN jobs_after AS n ON n.id = o.id
    WHERE o.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (o.status <> 'PAUSED' OR o.node <> '')
      AND n.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = EXCLUDED.node, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
        exit_code = EXCLUDED.exit_code, ending = EXCLUDED.ending, message = EXCLUDED.message;
    RETURN NULL;
END
$$;
ALTER TABLE nodes DROP COLUMN running_usage;
DROP INDEX job_attempts_type_ended;
ALTER TABLE job_attempts
    DROP COLUMN job_type,
    DROP COLUMN job_load,
    DROP COLUMN cpu_seconds,
    DROP COLUMN peak_memory,
    DROP COLUMN wall_seconds,
    DROP COLUMN oom_killed;
ALTER TABLE jobs
    DROP COLUMN memory_limit,
    DROP COLUMN cpu_seconds,
    DROP COLUMN peak_memory,
    DROP COLUMN wall_seconds,
    DROP COLUMN oom_killed;

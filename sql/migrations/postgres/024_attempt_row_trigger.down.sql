-- The attempts are recorded by the statement-level trigger of migration
-- 009, with the function of migration 017.
DROP TRIGGER jobs_record_attempts ON jobs;
DROP FUNCTION jobs_record_attempt();

CREATE FUNCTION jobs_record_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    SELECT o.id, o.attempt, o.node, o.started_at, clock_timestamp(), n.exit_code, n.status, n.message,
           o.type, o.job_load, n.cpu_seconds, n.peak_memory, n.wall_seconds, n.oom_killed
    FROM jobs_before AS o JOIN jobs_after AS n ON n.id = o.id
    WHERE o.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (o.status <> 'PAUSED' OR o.node <> '')
      AND n.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND NOT (n.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
               AND n.finished_at IS NOT NULL AND n.node = o.node)
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = EXCLUDED.node, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
        exit_code = EXCLUDED.exit_code, ending = EXCLUDED.ending, message = EXCLUDED.message,
        job_type = EXCLUDED.job_type, job_load = EXCLUDED.job_load, cpu_seconds = EXCLUDED.cpu_seconds,
        peak_memory = EXCLUDED.peak_memory, wall_seconds = EXCLUDED.wall_seconds, oom_killed = EXCLUDED.oom_killed;
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    SELECT o.id, o.attempt, o.node, o.started_at, o.finished_at, o.exit_code, o.status, o.message,
           o.type, o.job_load, o.cpu_seconds, o.peak_memory, o.wall_seconds, o.oom_killed
    FROM jobs_before AS o JOIN jobs_after AS n ON n.id = o.id
    WHERE o.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
      AND o.finished_at IS NOT NULL AND o.attempt > 0
      AND (n.status <> o.status OR n.attempt <> o.attempt OR n.node <> o.node
           OR n.finished_at IS DISTINCT FROM o.finished_at)
    ON CONFLICT (job_id, attempt) DO NOTHING;
    -- A late result taken (engine.TakesLateResult) rewrites the record
    -- of the attempt its recovery ended.
    UPDATE job_attempts AS a
    SET ended_at = clock_timestamp(), exit_code = n.exit_code, ending = n.status, message = n.message,
        cpu_seconds = n.cpu_seconds, peak_memory = n.peak_memory, wall_seconds = n.wall_seconds,
        oom_killed = n.oom_killed
    FROM jobs_before AS o JOIN jobs_after AS n ON n.id = o.id
    WHERE a.job_id = n.id AND a.attempt = n.attempt
      AND o.status = 'RESTART' AND o.node = '' AND o.attempt > 0 AND n.attempt = o.attempt
      AND n.version <> o.version
      AND (n.status = 'RESTART'
           OR n.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND n.node <> '');
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_record_attempts
    AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS jobs_before NEW TABLE AS jobs_after
    FOR EACH STATEMENT
    EXECUTE FUNCTION jobs_record_attempts();

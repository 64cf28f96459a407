-- Late results are no longer taken: the trigger function of migration
-- 016. The rows put back from DISPATCHING stay in the queue, and the CHECK
-- of jobs.status lets the name through again.
ALTER TABLE jobs
    DROP CONSTRAINT jobs_status_check,
    ADD CONSTRAINT jobs_status_check CHECK (status IN ('INSTANTIATED', 'QUEUED', 'RESTART', 'DISPATCHING',
        'RUNNING', 'PAUSED', 'WAITING', 'CANCELLING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED'));

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
    RETURN NULL;
END
$$;

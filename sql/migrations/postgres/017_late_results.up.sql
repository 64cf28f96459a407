-- The DISPATCHING state is retired, and a late result is taken when
-- nothing has replaced its run.
--
-- A job was DISPATCHING while a dispatcher of an older release offered it
-- to a node; jobctl now offers jobs as they are queued, and the node's
-- start is the claim. A row still DISPATCHING was left by such a
-- dispatcher cut short: it goes back to the queue as that dispatcher's
-- successor put it back, to RESTART with no node, its attempt number as it
-- was (no run of it started), and a message that says why. The version
-- moves on, so an offer of it still in flight starts nothing. Then the
-- CHECK of jobs.status no longer lets the name through.
UPDATE jobs SET status = 'RESTART', version = version + 1,
                message = 'dispatch to ' || node || ' was interrupted', node = ''
WHERE status = 'DISPATCHING';

ALTER TABLE jobs
    DROP CONSTRAINT jobs_status_check,
    ADD CONSTRAINT jobs_status_check CHECK (status IN ('INSTANTIATED', 'QUEUED', 'RESTART', 'RUNNING', 'PAUSED',
        'WAITING', 'CANCELLING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED'));

-- A job put back to RESTART because its node was given up on may have
-- its run's result taken late (engine.LateOutcome): it then leaves RESTART
-- at the same attempt for a retry, or for an ending with the run's node on
-- its row (engine.TakesLateResult; no other write does either). The
-- recovery recorded that attempt as ended by RESTART; the late result
-- rewrites that record, so the job keeps one record of the attempt, and it
-- says how the run really ended. The record stays the attempt's, also
-- when the row holds the same ending (job_final_attempts reads the row's
-- only where job_attempts has none of its number). It is one more
-- statement of the one trigger function, as migration 016 has it.
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

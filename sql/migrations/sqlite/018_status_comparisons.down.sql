-- The IN lists of migrations 015 and 016 back.
DROP INDEX jobs_ended;
CREATE INDEX jobs_ended ON jobs (finished_at, id)
    WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
DROP INDEX jobs_type_measured;
CREATE INDEX jobs_type_measured ON jobs (type, finished_at, id)
    WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND cpu_seconds IS NOT NULL;

DROP TRIGGER jobs_record_attempt;
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
         AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
         AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
         AND NOT (NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
                  AND NEW.finished_at IS NOT NULL AND NEW.node = OLD.node)
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, datetime('now', 'subsec'), NEW.exit_code, NEW.status,
            NEW.message, OLD.type, OLD.job_load, NEW.cpu_seconds, NEW.peak_memory, NEW.wall_seconds, NEW.oom_killed)
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = excluded.node, started_at = excluded.started_at, ended_at = excluded.ended_at,
        exit_code = excluded.exit_code, ending = excluded.ending, message = excluded.message,
        job_type = excluded.job_type, job_load = excluded.job_load, cpu_seconds = excluded.cpu_seconds,
        peak_memory = excluded.peak_memory, wall_seconds = excluded.wall_seconds, oom_killed = excluded.oom_killed;
END;

DROP TRIGGER jobs_keep_final_attempt;
CREATE TRIGGER jobs_keep_final_attempt
    AFTER UPDATE OF status, attempt, node, finished_at ON jobs
    FOR EACH ROW
    WHEN OLD.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
         AND OLD.finished_at IS NOT NULL AND OLD.attempt > 0
         AND (NEW.status <> OLD.status OR NEW.attempt <> OLD.attempt OR NEW.node <> OLD.node
              OR NEW.finished_at IS NOT OLD.finished_at)
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, OLD.finished_at, OLD.exit_code, OLD.status,
            OLD.message, OLD.type, OLD.job_load, OLD.cpu_seconds, OLD.peak_memory, OLD.wall_seconds, OLD.oom_killed)
    ON CONFLICT (job_id, attempt) DO NOTHING;
END;

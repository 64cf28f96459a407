-- Every final attempt back into job_attempts, where migration 014's
-- trigger kept them.
DROP TRIGGER jobs_keep_final_attempt;
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

-- The trigger of migration 014.
DROP TRIGGER jobs_record_attempt;
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
         AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
         AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
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

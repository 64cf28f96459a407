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
ON DUPLICATE KEY UPDATE attempt = job_attempts.attempt;

ALTER TABLE jobs DROP INDEX jobs_type_measured, DROP COLUMN measured_type;
ALTER TABLE job_attempts
    DROP INDEX job_attempts_type_measured,
    DROP COLUMN measured_type,
    ADD INDEX job_attempts_type_ended (job_type, ended_at);

-- The trigger of migration 014.
DROP TRIGGER jobs_record_attempt;
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE ON jobs
    FOR EACH ROW
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    SELECT OLD.id, OLD.attempt, OLD.node, OLD.started_at, UTC_TIMESTAMP(6), NEW.exit_code, NEW.status, NEW.message,
           OLD.type, OLD.job_load, NEW.cpu_seconds, NEW.peak_memory, NEW.wall_seconds, NEW.oom_killed
    FROM DUAL
    WHERE OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
      AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
    ON DUPLICATE KEY UPDATE
        node = OLD.node, started_at = OLD.started_at, ended_at = UTC_TIMESTAMP(6), exit_code = NEW.exit_code,
        ending = NEW.status, message = NEW.message, job_type = OLD.type, job_load = OLD.job_load,
        cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
        oom_killed = NEW.oom_killed;

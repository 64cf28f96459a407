DROP TRIGGER jobs_record_attempt;
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE ON jobs
    FOR EACH ROW
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message)
    SELECT OLD.id, OLD.attempt, OLD.node, OLD.started_at, UTC_TIMESTAMP(6), NEW.exit_code, NEW.status, NEW.message
    FROM DUAL
    WHERE OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
      AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
      AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
    ON DUPLICATE KEY UPDATE
        node = OLD.node, started_at = OLD.started_at, ended_at = UTC_TIMESTAMP(6), exit_code = NEW.exit_code,
        ending = NEW.status, message = NEW.message;
ALTER TABLE nodes DROP COLUMN running_usage;
ALTER TABLE job_attempts
    DROP INDEX job_attempts_type_ended,
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

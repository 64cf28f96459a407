DROP TRIGGER jobs_record_attempt;
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
         AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
         AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
BEGIN
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message)
    VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, datetime('now', 'subsec'), NEW.exit_code, NEW.status,
            NEW.message)
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = excluded.node, started_at = excluded.started_at, ended_at = excluded.ended_at,
        exit_code = excluded.exit_code, ending = excluded.ending, message = excluded.message;
END;
ALTER TABLE nodes DROP COLUMN running_usage;
DROP INDEX job_attempts_type_ended;
ALTER TABLE job_attempts DROP COLUMN oom_killed;
ALTER TABLE job_attempts DROP COLUMN wall_seconds;
ALTER TABLE job_attempts DROP COLUMN peak_memory;
ALTER TABLE job_attempts DROP COLUMN cpu_seconds;
ALTER TABLE job_attempts DROP COLUMN job_load;
ALTER TABLE job_attempts DROP COLUMN job_type;
ALTER TABLE jobs DROP COLUMN oom_killed;
ALTER TABLE jobs DROP COLUMN wall_seconds;
ALTER TABLE jobs DROP COLUMN peak_memory;
ALTER TABLE jobs DROP COLUMN cpu_seconds;
ALTER TABLE jobs DROP COLUMN memory_limit;

-- What each attempt really used, and a job's memory limit.
--
-- A job carries its memory limit (memory_limit, bytes; 0 for none) and what
-- its last ended attempt used, as its node measured it: CPU seconds, peak
-- memory in bytes and wall seconds (all NULL when that attempt was not
-- measured), and whether a process of it was killed at its memory limit.
-- The node sets them in the statement that ends the attempt; a new attempt
-- (and a requeue) clears them, as it clears the exit code.
ALTER TABLE jobs
    ADD COLUMN memory_limit BIGINT  NOT NULL DEFAULT 0,
    ADD COLUMN cpu_seconds  DOUBLE  NULL,
    ADD COLUMN peak_memory  BIGINT  NULL,
    ADD COLUMN wall_seconds DOUBLE  NULL,
    ADD COLUMN oom_killed   BOOLEAN NOT NULL DEFAULT FALSE;

-- The attempt keeps them too, with its job's type and load, so the use of
-- a type over its latest runs is read from this table alone.
ALTER TABLE job_attempts
    ADD COLUMN job_type     VARCHAR(255) NOT NULL DEFAULT '',
    ADD COLUMN job_load     DOUBLE       NOT NULL DEFAULT 0,
    ADD COLUMN cpu_seconds  DOUBLE       NULL,
    ADD COLUMN peak_memory  BIGINT       NULL,
    ADD COLUMN wall_seconds DOUBLE       NULL,
    ADD COLUMN oom_killed   BOOLEAN      NOT NULL DEFAULT FALSE,
    ADD INDEX job_attempts_type_ended (job_type, ended_at);
UPDATE job_attempts a JOIN jobs j ON j.id = a.job_id SET a.job_type = j.type, a.job_load = j.job_load;

-- What a node measured of each job it runs, as of its last liveness
-- report: a JSON array of engine.LiveUsage.
ALTER TABLE nodes ADD COLUMN running_usage LONGTEXT NOT NULL DEFAULT ('[]');

-- The trigger of migration 009, copying the usage as well.
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

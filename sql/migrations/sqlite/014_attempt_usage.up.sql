-- What each attempt really used, and a job's memory limit.
--
-- A job carries its memory limit (memory_limit, bytes; 0 for none) and what
-- its last ended attempt used, as its node measured it: CPU seconds, peak
-- memory in bytes and wall seconds (all NULL when that attempt was not
-- measured), and whether a process of it was killed at its memory limit.
-- The node sets them in the statement that ends the attempt; a new attempt
-- (and a requeue) clears them, as it clears the exit code.
ALTER TABLE jobs ADD COLUMN memory_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN cpu_seconds REAL;
ALTER TABLE jobs ADD COLUMN peak_memory INTEGER;
ALTER TABLE jobs ADD COLUMN wall_seconds REAL;
ALTER TABLE jobs ADD COLUMN oom_killed INTEGER NOT NULL DEFAULT 0;

-- The attempt keeps them too, with its job's type and load, so the use of
-- a type over its latest runs is read from this table alone.
ALTER TABLE job_attempts ADD COLUMN job_type TEXT NOT NULL DEFAULT '';
ALTER TABLE job_attempts ADD COLUMN job_load REAL NOT NULL DEFAULT 0;
ALTER TABLE job_attempts ADD COLUMN cpu_seconds REAL;
ALTER TABLE job_attempts ADD COLUMN peak_memory INTEGER;
ALTER TABLE job_attempts ADD COLUMN wall_seconds REAL;
ALTER TABLE job_attempts ADD COLUMN oom_killed INTEGER NOT NULL DEFAULT 0;
UPDATE job_attempts SET job_type = COALESCE((SELECT type FROM jobs WHERE jobs.id = job_attempts.job_id), ''),
                        job_load = COALESCE((SELECT job_load FROM jobs WHERE jobs.id = job_attempts.job_id), 0);
CREATE INDEX job_attempts_type_ended ON job_attempts (job_type, ended_at);

-- What a node measured of each job it runs, as of its last liveness
-- report: a JSON array of engine.LiveUsage.
ALTER TABLE nodes ADD COLUMN running_usage TEXT NOT NULL DEFAULT '[]';

-- The trigger of migration 009, copying the usage as well.
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

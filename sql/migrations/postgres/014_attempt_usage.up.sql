-- What each attempt really used, and a job's memory limit.
--
-- A job carries its memory limit (memory_limit, bytes; 0 for none) and what
-- its last ended attempt used, as its node measured it: CPU seconds, peak
-- memory in bytes and wall seconds (all NULL when that attempt was not
-- measured), and whether a process of it was killed at its memory limit.
-- The node sets them in the statement that ends the attempt; a new attempt
-- (and a requeue) clears them, as it clears the exit code.
ALTER TABLE jobs
    ADD COLUMN memory_limit BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN cpu_seconds DOUBLE PRECISION,
    ADD COLUMN peak_memory BIGINT,
    ADD COLUMN wall_seconds DOUBLE PRECISION,
    ADD COLUMN oom_killed BOOLEAN NOT NULL DEFAULT FALSE;

-- The attempt keeps them too, with its job's type and load, so the use of
-- a type over its latest runs is read from this table alone.
ALTER TABLE job_attempts
    ADD COLUMN job_type TEXT NOT NULL DEFAULT '',
    ADD COLUMN job_load DOUBLE PRECISION NOT NULL DEFAULT 0,
    ADD COLUMN cpu_seconds DOUBLE PRECISION,
    ADD COLUMN peak_memory BIGINT,
    ADD COLUMN wall_seconds DOUBLE PRECISION,
    ADD COLUMN oom_killed BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE job_attempts a SET job_type = j.type, job_load = j.job_load FROM jobs j WHERE j.id = a.job_id;
CREATE INDEX job_attempts_type_ended ON job_attempts (job_type, ended_at);

-- What a node measured of each job it runs, as of its last liveness
-- report: a JSON array of engine.LiveUsage.
ALTER TABLE nodes ADD COLUMN running_usage TEXT NOT NULL DEFAULT '[]';

-- The trigger function of migration 009, copying the usage as well.
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
    ON CONFLICT (job_id, attempt) DO UPDATE SET
        node = EXCLUDED.node, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
        exit_code = EXCLUDED.exit_code, ending = EXCLUDED.ending, message = EXCLUDED.message,
        job_type = EXCLUDED.job_type, job_load = EXCLUDED.job_load, cpu_seconds = EXCLUDED.cpu_seconds,
        peak_memory = EXCLUDED.peak_memory, wall_seconds = EXCLUDED.wall_seconds, oom_killed = EXCLUDED.oom_killed;
    RETURN NULL;
END
$$;

-- A job that ends for good keeps its final attempt on its own row.
--
-- The trigger of migration 014 copied every ended attempt into
-- job_attempts, the final one too, although the job's row holds all of it
-- already once it has ended: the attempt number, node and start, the end
-- (finished_at), the exit code, the ending (its status), the message and
-- the measured use. In a burn-down of short jobs that copy was one more
-- row, its index entries and later its purge, for every job. Now only an
-- attempt the job goes on from (RESTART, back to the queue) is copied when
-- it ends. An attempt that ends the job (engine.TerminalStatuses) stays on
-- the row, unless that write leaves the row unable to name it: no end time,
-- or a node other than the one the attempt ran on; then it is copied as
-- before.
--
-- The row holds its final attempt only while the job stays ended as it
-- ended. A write that moves it on (a requeue, a delete, anything that
-- changes its status, attempt, node or end) first copies the old row's
-- final attempt into job_attempts, unless a row of that number is there
-- already, so no attempt leaves the history.
--
-- Readers take an ended job's final attempt from its row where job_attempts
-- has no row of its number (job_final_attempts.sql), so every list of
-- attempts and every sum of use reads what it read before.
--
-- One function for both copies: the statement's old and new rows are read
-- once per statement either way, and a second trigger would cost every
-- UPDATE of jobs a second call.
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

-- The copies of final attempts that the rows hold now. One whose job's
-- row no longer names it (its node was cleared) stays.
DELETE FROM job_attempts AS a
USING jobs AS j
WHERE j.id = a.job_id AND j.attempt = a.attempt
  AND j.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
  AND j.finished_at IS NOT NULL AND a.ending = j.status AND a.node = j.node;

-- The newest measured runs of a type, from both places, each in one read
-- down an index that holds measured runs only. The term of each WHERE
-- stands as job_attempt_usage_type and job_final_attempts write it.
DROP INDEX job_attempts_type_ended;
CREATE INDEX job_attempts_type_measured ON job_attempts (job_type, ended_at, job_id, attempt)
    WHERE cpu_seconds IS NOT NULL;
CREATE INDEX jobs_type_measured ON jobs (type, finished_at, id)
    WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND cpu_seconds IS NOT NULL;

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

-- The row holds its final attempt only while the job stays ended as it
-- ended. A write that moves it on (a requeue, a delete, anything that
-- changes its status, attempt, node or end) first copies the old row's
-- final attempt into job_attempts, unless a row of that number is there
-- already, so no attempt leaves the history. Readers take an ended job's
-- final attempt from its row where job_attempts has no row of its number
-- (job_final_attempts.sql).
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

-- The copies of final attempts that the rows hold now. One whose job's
-- row no longer names it (its node was cleared) stays.
DELETE FROM job_attempts
WHERE EXISTS (SELECT 1 FROM jobs AS j
              WHERE j.id = job_attempts.job_id AND j.attempt = job_attempts.attempt
                AND j.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
                AND j.finished_at IS NOT NULL AND j.status = job_attempts.ending AND j.node = job_attempts.node);

-- The newest measured runs of a type, from both places, each in one read
-- down an index that holds measured runs only. SQLite uses a partial index
-- only for a query that repeats its WHERE term as written, which
-- job_attempt_usage_type and job_final_attempts do.
DROP INDEX job_attempts_type_ended;
CREATE INDEX job_attempts_type_measured ON job_attempts (job_type, ended_at, job_id, attempt)
    WHERE cpu_seconds IS NOT NULL;
CREATE INDEX jobs_type_measured ON jobs (type, finished_at, id)
    WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND cpu_seconds IS NOT NULL;

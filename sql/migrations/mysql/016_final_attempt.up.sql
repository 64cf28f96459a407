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
      AND NOT (NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
               AND NEW.finished_at IS NOT NULL AND NEW.node = OLD.node)
    ON DUPLICATE KEY UPDATE
        node = OLD.node, started_at = OLD.started_at, ended_at = UTC_TIMESTAMP(6), exit_code = NEW.exit_code,
        ending = NEW.status, message = NEW.message, job_type = OLD.type, job_load = OLD.job_load,
        cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
        oom_killed = NEW.oom_killed;

-- The row holds its final attempt only while the job stays ended as it
-- ended. A write that moves it on (a requeue, a delete, anything that
-- changes its status, attempt, node or end) first copies the old row's
-- final attempt into job_attempts, unless a row of that number is there
-- already (the no-op update leaves it as it is), so no attempt leaves the
-- history. Readers take an ended job's final attempt from its row where
-- job_attempts has no row of its number (job_final_attempts.sql).
CREATE TRIGGER jobs_keep_final_attempt
    AFTER UPDATE ON jobs
    FOR EACH ROW
    INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                              job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
    SELECT OLD.id, OLD.attempt, OLD.node, OLD.started_at, OLD.finished_at, OLD.exit_code, OLD.status, OLD.message,
           OLD.type, OLD.job_load, OLD.cpu_seconds, OLD.peak_memory, OLD.wall_seconds, OLD.oom_killed
    FROM DUAL
    WHERE OLD.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
      AND OLD.finished_at IS NOT NULL AND OLD.attempt > 0
      AND (NEW.status <> OLD.status OR NEW.attempt <> OLD.attempt OR NEW.node <> OLD.node
           OR NOT (NEW.finished_at <=> OLD.finished_at))
    ON DUPLICATE KEY UPDATE attempt = attempt;

-- The copies of final attempts that the rows hold now. One whose job's
-- row no longer names it (its node was cleared) stays.
DELETE a FROM job_attempts AS a
JOIN jobs AS j ON j.id = a.job_id AND j.attempt = a.attempt
WHERE j.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
  AND j.finished_at IS NOT NULL AND a.ending = j.status AND a.node = j.node;

-- The newest measured runs of a type, from both places, each in one read
-- down an index of measured runs. MySQL has no partial index: a virtual
-- column that is the type of a measured run and NULL otherwise, and its
-- index, stand in for one on each table (mysql/job_attempt_usage_type.sql
-- and mysql/job_final_attempts_measured.sql read them). The columns are
-- computed, never stored or written.
ALTER TABLE job_attempts
    DROP INDEX job_attempts_type_ended,
    ADD COLUMN measured_type VARCHAR(255) AS (CASE WHEN cpu_seconds IS NOT NULL THEN job_type END) VIRTUAL,
    ADD INDEX job_attempts_type_measured (measured_type, ended_at, job_id, attempt);
ALTER TABLE jobs
    ADD COLUMN measured_type VARCHAR(255) AS (CASE WHEN status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
        AND cpu_seconds IS NOT NULL THEN type END) VIRTUAL,
    ADD INDEX jobs_type_measured (measured_type, finished_at, id);

-- The three AFTER UPDATE triggers of jobs (migrations 016 and 017) become
-- one, whose statements each run only when the row's OLD and NEW values
-- call for them.
--
-- A MySQL or MariaDB trigger has no WHEN: each of the three ran its
-- statement for every row any UPDATE wrote, and a statement whose WHERE
-- matches nothing still opens job_attempts and resolves every column it
-- names. A start or a finish, nearly every write, needs none of them, yet
-- running the three was a third of the server's work in a burn-down. An
-- IF on the same conditions is only an expression to evaluate, and the
-- server resolves each one anew for every row: the old status, which
-- tells the three cases apart, is tested first and alone, so that a start
-- evaluates three short tests and a finish one and its remainder. The
-- conditions and statements are those of the three triggers.
DROP TRIGGER jobs_record_attempt;
DROP TRIGGER jobs_keep_final_attempt;
DROP TRIGGER jobs_take_late_result;
CREATE TRIGGER jobs_record_attempts
    AFTER UPDATE ON jobs
    FOR EACH ROW
BEGIN
    IF OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING') THEN
        -- An attempt the job goes on from, or one whose end the row
        -- cannot name (migration 016's jobs_record_attempt).
        IF (OLD.status <> 'PAUSED' OR OLD.node <> '')
           AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
           AND NOT (NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
                    AND NEW.finished_at IS NOT NULL AND NEW.node = OLD.node) THEN
            INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                                      job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
            VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, UTC_TIMESTAMP(6), NEW.exit_code, NEW.status,
                    NEW.message, OLD.type, OLD.job_load, NEW.cpu_seconds, NEW.peak_memory, NEW.wall_seconds,
                    NEW.oom_killed)
            ON DUPLICATE KEY UPDATE
                node = OLD.node, started_at = OLD.started_at, ended_at = UTC_TIMESTAMP(6),
                exit_code = NEW.exit_code, ending = NEW.status, message = NEW.message, job_type = OLD.type,
                job_load = OLD.job_load, cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory,
                wall_seconds = NEW.wall_seconds, oom_killed = NEW.oom_killed;
        END IF;
    ELSEIF OLD.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') THEN
        -- The final attempt the row held, before a write moves the job on
        -- (migration 016's jobs_keep_final_attempt).
        IF OLD.finished_at IS NOT NULL AND OLD.attempt > 0
           AND (NEW.status <> OLD.status OR NEW.attempt <> OLD.attempt OR NEW.node <> OLD.node
                OR NOT (NEW.finished_at <=> OLD.finished_at)) THEN
            INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                                      job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
            VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, OLD.finished_at, OLD.exit_code, OLD.status,
                    OLD.message, OLD.type, OLD.job_load, OLD.cpu_seconds, OLD.peak_memory, OLD.wall_seconds,
                    OLD.oom_killed)
            ON DUPLICATE KEY UPDATE attempt = attempt;
        END IF;
    ELSEIF OLD.status = 'RESTART' THEN
        -- A late result rewrites the record of its attempt (migration
        -- 017's jobs_take_late_result).
        IF OLD.node = '' AND OLD.attempt > 0 AND NEW.attempt = OLD.attempt
           AND NEW.version <> OLD.version
           AND (NEW.status = 'RESTART'
                OR NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND NEW.node <> '') THEN
            UPDATE job_attempts
            SET ended_at = UTC_TIMESTAMP(6), exit_code = NEW.exit_code, ending = NEW.status, message = NEW.message,
                cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
                oom_killed = NEW.oom_killed
            WHERE job_id = NEW.id AND attempt = NEW.attempt;
        END IF;
    END IF;
END;

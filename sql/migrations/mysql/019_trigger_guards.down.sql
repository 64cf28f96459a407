-- The three triggers of migrations 016 and 017, each running its statement
-- for every row.
DROP TRIGGER jobs_record_attempts;
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

CREATE TRIGGER jobs_take_late_result
    AFTER UPDATE ON jobs
    FOR EACH ROW
    UPDATE job_attempts
    SET ended_at = UTC_TIMESTAMP(6), exit_code = NEW.exit_code, ending = NEW.status, message = NEW.message,
        cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
        oom_killed = NEW.oom_killed
    WHERE job_id = NEW.id AND attempt = NEW.attempt
      AND OLD.status = 'RESTART' AND OLD.node = '' AND OLD.attempt > 0 AND NEW.attempt = OLD.attempt
      AND NEW.version <> OLD.version
      AND (NEW.status = 'RESTART'
           OR NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND NEW.node <> '');

-- The IN lists of migrations 004 and 017 back.
DROP INDEX jobs_live_key_id;
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE job_key <> '' AND status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');

DROP TRIGGER jobs_take_late_result;
CREATE TRIGGER jobs_take_late_result
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN OLD.status = 'RESTART' AND OLD.node = '' AND OLD.attempt > 0 AND NEW.attempt = OLD.attempt
         AND NEW.version <> OLD.version
         AND (NEW.status = 'RESTART'
              OR NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND NEW.node <> '')
BEGIN
    UPDATE job_attempts
    SET ended_at = datetime('now', 'subsec'), exit_code = NEW.exit_code, ending = NEW.status, message = NEW.message,
        cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
        oom_killed = NEW.oom_killed
    WHERE job_id = NEW.id AND attempt = NEW.attempt;
END;

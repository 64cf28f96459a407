-- The DISPATCHING state is retired, and a late result is taken when
-- nothing has replaced its run.
--
-- A job was DISPATCHING while a dispatcher of an older release offered it
-- to a node; jobctl now offers jobs as they are queued, and the node's
-- start is the claim. A row still DISPATCHING was left by such a
-- dispatcher cut short: it goes back to the queue as that dispatcher's
-- successor put it back, to RESTART with no node, its attempt number as it
-- was (no run of it started), and a message that says why. The version
-- moves on, so an offer of it still in flight starts nothing. (MySQL
-- assigns left to right with the values already changed: the message
-- reads the node before it is cleared.)
--
-- The CHECK jobs_status still lets the name through: MySQL and MariaDB
-- change a CHECK only by copying the whole table. No release writes it
-- any more.
UPDATE jobs SET message = CONCAT('dispatch to ', node, ' was interrupted'), status = 'RESTART',
                version = version + 1, node = ''
WHERE status = 'DISPATCHING';

-- A job put back to RESTART because its node was given up on may have
-- its run's result taken late (engine.LateOutcome): it then leaves RESTART
-- at the same attempt for a retry, or for an ending with the run's node on
-- its row (engine.TakesLateResult; no other write does either). The
-- recovery recorded that attempt as ended by RESTART; the late result
-- rewrites that record, so the job keeps one record of the attempt, and it
-- says how the run really ended. The record stays the attempt's, also
-- when the row holds the same ending (job_final_attempts reads the row's
-- only where job_attempts has none of its number). Any other write
-- matches no row here, by its OLD and NEW values alone.
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

-- The last two state tests that a job's writes run with IN lists, written
-- as comparisons for the reason migration 018 gives: SQLite fills a
-- temporary index with the values of such a list for every row a write
-- changes. The index of live keys tests every write of a job with a key,
-- its row before and after, so a keyed job paid for four of them between
-- its start and its end. The tests below are the same tests, status being
-- NOT NULL.
--
-- SQLite uses a partial index only for a query that repeats each of its
-- WHERE terms as written: job_live_key_match renders the statuses it
-- leaves out exactly as this does ({{statusNoneOf}} in dbstore).
DROP INDEX jobs_live_key_id;
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE job_key <> '' AND status <> 'FINISHED' AND status <> 'WARNING' AND status <> 'FAILED'
          AND status <> 'CANCELLED' AND status <> 'DELETED';

-- The trigger of migration 017, its WHEN clause written out.
DROP TRIGGER jobs_take_late_result;
CREATE TRIGGER jobs_take_late_result
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN OLD.status = 'RESTART' AND OLD.node = '' AND OLD.attempt > 0 AND NEW.attempt = OLD.attempt
         AND NEW.version <> OLD.version
         AND (NEW.status = 'RESTART'
              OR (NEW.status = 'FINISHED' OR NEW.status = 'WARNING' OR NEW.status = 'FAILED'
                  OR NEW.status = 'CANCELLED' OR NEW.status = 'DELETED') AND NEW.node <> '')
BEGIN
    UPDATE job_attempts
    SET ended_at = datetime('now', 'subsec'), exit_code = NEW.exit_code, ending = NEW.status, message = NEW.message,
        cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
        oom_killed = NEW.oom_killed
    WHERE job_id = NEW.id AND attempt = NEW.attempt;
END;

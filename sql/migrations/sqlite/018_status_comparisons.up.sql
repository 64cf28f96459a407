-- The state tests that SQLite runs for every row a job write changes are
-- comparisons joined by OR and AND instead of IN lists.
--
-- SQLite evaluates a list of more than two values, x IN ('A', 'B', 'C'), by
-- filling a temporary index with the values and looking x up in it. In a
-- query it fills that index once per statement; in a trigger's WHEN clause
-- and a partial index's WHERE clause it fills it again for every row. A
-- job's start and end each changes its status, so every such write tested
-- the row against the ended jobs' indexes (before and after) and the
-- triggers of migrations 016 and 017 this way: a quarter of the cost of a
-- node's batch of starts or results. The tests below are the same tests:
-- status is never NULL, and where it were, both forms would be NULL alike.
--
-- SQLite uses a partial index only for a query that repeats its WHERE term
-- as written: the queries of jobs_ended and jobs_type_measured render the
-- ended statuses exactly as these do ({{statusOneOf}} in dbstore).
DROP INDEX jobs_ended;
CREATE INDEX jobs_ended ON jobs (finished_at, id)
    WHERE (status = 'FINISHED' OR status = 'WARNING' OR status = 'FAILED' OR status = 'CANCELLED'
           OR status = 'DELETED');
DROP INDEX jobs_type_measured;
CREATE INDEX jobs_type_measured ON jobs (type, finished_at, id)
    WHERE (status = 'FINISHED' OR status = 'WARNING' OR status = 'FAILED' OR status = 'CANCELLED'
           OR status = 'DELETED') AND cpu_seconds IS NOT NULL;

-- The triggers of migration 016, their WHEN clauses written out.
DROP TRIGGER jobs_record_attempt;
CREATE TRIGGER jobs_record_attempt
    AFTER UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN (OLD.status = 'RUNNING' OR OLD.status = 'PAUSED' OR OLD.status = 'CANCELLING' OR OLD.status = 'WAITING')
         AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
         AND NEW.status <> 'RUNNING' AND NEW.status <> 'PAUSED' AND NEW.status <> 'CANCELLING'
         AND NEW.status <> 'WAITING'
         AND NOT ((NEW.status = 'FINISHED' OR NEW.status = 'WARNING' OR NEW.status = 'FAILED'
                   OR NEW.status = 'CANCELLED' OR NEW.status = 'DELETED')
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

DROP TRIGGER jobs_keep_final_attempt;
CREATE TRIGGER jobs_keep_final_attempt
    AFTER UPDATE OF status, attempt, node, finished_at ON jobs
    FOR EACH ROW
    WHEN (OLD.status = 'FINISHED' OR OLD.status = 'WARNING' OR OLD.status = 'FAILED' OR OLD.status = 'CANCELLED'
          OR OLD.status = 'DELETED')
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

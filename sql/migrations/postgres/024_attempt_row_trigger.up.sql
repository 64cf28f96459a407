-- The trigger that records attempts in job_attempts runs for a row only
-- when that row calls for a record, as the WHEN of a row-level trigger
-- tells without a call. A statement-level trigger with transition tables
-- made PostgreSQL copy the row before and after into two tuple stores for
-- every row every UPDATE changed, and then join them, although the
-- starts and the ends of runs, almost every write, call for no record:
-- about a tenth of the time of a batch of starts or of ends. The records
-- are those the function of migration 017 wrote, one row at a time; a
-- row's three cases differ by its state before, so one branch runs.
CREATE FUNCTION jobs_record_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING') THEN
        -- A run left by any way but its own end: the attempt it ended.
        INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                                  job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
        VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, clock_timestamp(), NEW.exit_code, NEW.status,
                NEW.message, OLD.type, OLD.job_load, NEW.cpu_seconds, NEW.peak_memory, NEW.wall_seconds,
                NEW.oom_killed)
        ON CONFLICT (job_id, attempt) DO UPDATE SET
            node = EXCLUDED.node, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
            exit_code = EXCLUDED.exit_code, ending = EXCLUDED.ending, message = EXCLUDED.message,
            job_type = EXCLUDED.job_type, job_load = EXCLUDED.job_load, cpu_seconds = EXCLUDED.cpu_seconds,
            peak_memory = EXCLUDED.peak_memory, wall_seconds = EXCLUDED.wall_seconds,
            oom_killed = EXCLUDED.oom_killed;
    ELSIF OLD.status = 'RESTART' THEN
        -- A late result taken (engine.TakesLateResult) rewrites the record
        -- of the attempt its recovery ended.
        UPDATE job_attempts
        SET ended_at = clock_timestamp(), exit_code = NEW.exit_code, ending = NEW.status, message = NEW.message,
            cpu_seconds = NEW.cpu_seconds, peak_memory = NEW.peak_memory, wall_seconds = NEW.wall_seconds,
            oom_killed = NEW.oom_killed
        WHERE job_id = NEW.id AND attempt = NEW.attempt;
    ELSE
        -- An ended job moved on: the final attempt its row held.
        INSERT INTO job_attempts (job_id, attempt, node, started_at, ended_at, exit_code, ending, message,
                                  job_type, job_load, cpu_seconds, peak_memory, wall_seconds, oom_killed)
        VALUES (OLD.id, OLD.attempt, OLD.node, OLD.started_at, OLD.finished_at, OLD.exit_code, OLD.status,
                OLD.message, OLD.type, OLD.job_load, OLD.cpu_seconds, OLD.peak_memory, OLD.wall_seconds,
                OLD.oom_killed)
        ON CONFLICT (job_id, attempt) DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER jobs_record_attempts ON jobs;
DROP FUNCTION jobs_record_attempts();

CREATE TRIGGER jobs_record_attempts
    AFTER UPDATE ON jobs
    FOR EACH ROW
    WHEN ((OLD.status IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
           AND (OLD.status <> 'PAUSED' OR OLD.node <> '')
           AND NEW.status NOT IN ('RUNNING', 'PAUSED', 'CANCELLING', 'WAITING')
           AND NOT (NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
                    AND NEW.finished_at IS NOT NULL AND NEW.node = OLD.node))
       OR (OLD.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')
           AND OLD.finished_at IS NOT NULL AND OLD.attempt > 0
           AND (NEW.status <> OLD.status OR NEW.attempt <> OLD.attempt OR NEW.node <> OLD.node
                OR NEW.finished_at IS DISTINCT FROM OLD.finished_at))
       OR (OLD.status = 'RESTART' AND OLD.node = '' AND OLD.attempt > 0 AND NEW.attempt = OLD.attempt
           AND NEW.version <> OLD.version
           AND (NEW.status = 'RESTART'
                OR NEW.status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED') AND NEW.node <> '')))
    EXECUTE FUNCTION jobs_record_attempt();

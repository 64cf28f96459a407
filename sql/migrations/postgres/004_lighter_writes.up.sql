-- Each job is written at least three times (insert, start, end), so what a
-- write costs beyond the row itself decides how many jobs a second the
-- database takes.

-- Keyless jobs, nearly all of them, need no entry in the index of live
-- keys: job_live_key_match looks up keyed jobs only. Without them a job's
-- insert and start each touch one index fewer.
DROP INDEX jobs_live_key_id;
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE job_key <> '' AND status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');

-- Notify once per statement instead of calling a function for every row:
-- a batch of a thousand finishes called it a thousand times, a fifth of the
-- batch's cost, to send one notification. The rows a statement wrote are
-- its transition table; the function notifies when any of them entered a
-- state that wakes the dispatcher (engine.WakingStatuses). A statement-level
-- trigger with a transition table cannot name columns, so every UPDATE runs
-- it; one that leaves no job in such a state (a start, a progress report)
-- sends nothing.
DROP TRIGGER jobs_notify_change ON jobs;
DROP FUNCTION jobs_notify_change();

CREATE FUNCTION jobs_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed
               WHERE status IN ('QUEUED', 'RESTART', 'WAITING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')) THEN
        PERFORM pg_notify('jobctl_job_changes', TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_notify_insert
    AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT
    EXECUTE FUNCTION jobs_notify_change();

CREATE TRIGGER jobs_notify_update
    AFTER UPDATE ON jobs
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT
    EXECUTE FUNCTION jobs_notify_change();

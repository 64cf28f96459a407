-- The update trigger of migration 004 notifies the dispatchers again.
CREATE FUNCTION jobs_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM changed
               WHERE status IN ('QUEUED', 'RESTART', 'WAITING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')) THEN
        PERFORM pg_notify('jobctl_job_changes', TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_notify_update
    AFTER UPDATE ON jobs
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT
    EXECUTE FUNCTION jobs_notify_change();

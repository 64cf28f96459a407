DROP TRIGGER jobs_notify_update ON jobs;
DROP TRIGGER jobs_notify_insert ON jobs;
DROP FUNCTION jobs_notify_change();
CREATE FUNCTION jobs_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobctl_job_changes', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;
CREATE TRIGGER jobs_notify_change
    AFTER INSERT OR UPDATE OF status ON jobs
    FOR EACH ROW
    WHEN (NEW.status IN ('QUEUED', 'RESTART', 'WAITING', 'FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED'))
    EXECUTE FUNCTION jobs_notify_change();
DROP INDEX jobs_live_key_id;
CREATE INDEX jobs_live_key_id ON jobs (job_key, id)
    WHERE status NOT IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED');
